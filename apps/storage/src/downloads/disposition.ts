import { essenceOf } from '../buckets/type-allowlist.js';

/**
 * Types a browser shows without running anything of the file's: images that are
 * pixels (never SVG, which holds scripts), audio, video, and plain text (with
 * `nosniff`, never taken for HTML). Everything else is an attachment: HTML, SVG,
 * XML, PDF, scripts and unknown bytes are downloaded, never rendered on our origin.
 */
const INLINE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'video/mp4',
  'video/webm',
  'video/ogg',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'audio/webm',
  'audio/mp4',
  'audio/aac',
  'audio/flac',
  'text/plain',
]);

/** Whether a file of this type may be shown inline. Pure. */
export function safeInline(contentType: string): boolean {
  const essence = essenceOf(contentType);
  return essence !== undefined && INLINE.has(essence);
}

/**
 * The `Content-Disposition` of a download: `inline` for the safe types (unless
 * `download` asks for an attachment), `attachment` otherwise, with the name's last
 * segment as an ASCII fallback and in full as RFC 8187 `filename*`. Pure.
 */
export function contentDisposition(name: string, contentType: string, download = false): string {
  const kind = !download && safeInline(contentType) ? 'inline' : 'attachment';
  const base = name.split('/').pop() ?? name;
  const ascii = base.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeRfc8187(base)}`;
}

function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
