import { isUtf8 } from 'node:buffer';
import { fileTypeFromBuffer } from 'file-type';
import { essenceOf } from '../buckets/type-allowlist.js';

/** How many first bytes the type is read from (file-type's own reasonable sample). */
export const SNIFF_BYTES = 4100;

/**
 * Text types whose declared name is believed when the bytes are text and look like
 * none of the active formats below: nothing of theirs runs in a browser.
 */
const PLAIN_TEXT_TYPES = new Set([
  'text/plain',
  'text/csv',
  'text/markdown',
  'application/json',
  'text/tab-separated-values',
]);

/**
 * The type a file really is, read from its first bytes, never from the name or the
 * declared `Content-Type` alone: binary formats by their signatures (the `file-type`
 * package); text that opens like HTML, SVG or XML as that type, whatever it was
 * declared as (a lying `image/png` holding `<script>` is `text/html`); other text
 * as its declared plain-text type or `text/plain`; anything else
 * `application/octet-stream`. `head` is the whole file when it is shorter than
 * {@link SNIFF_BYTES}.
 */
export async function sniffType(head: Buffer, declared: string | undefined): Promise<string> {
  const found = await fileTypeFromBuffer(head);
  // file-type calls every XML document application/xml: SVG is told apart below.
  if (found && found.mime !== 'application/xml') return found.mime;
  const text = textOf(head);
  if (text === undefined) return 'application/octet-stream';
  const start = text
    .replace(/^\uFEFF/, '')
    .trimStart()
    .slice(0, 1024)
    .toLowerCase();
  if (/^(?:<!--[\s\S]*?-->\s*)*(?:<!doctype svg|<svg[\s>/])/.test(start)) return 'image/svg+xml';
  if (start.startsWith('<?xml') && /<svg[\s>/]/.test(start)) return 'image/svg+xml';
  if (
    /^(?:<!--[\s\S]*?-->\s*)*(?:<!doctype html|<html|<head|<body|<script|<iframe|<h1|<div|<p[\s>]|<a[\s>]|<meta|<style|<title)/.test(
      start,
    )
  )
    return 'text/html';
  if (start.startsWith('<?xml')) return 'application/xml';
  const essence = declared ? essenceOf(declared) : undefined;
  return essence && PLAIN_TEXT_TYPES.has(essence) ? essence : 'text/plain';
}

/**
 * The head as text when it is UTF-8 without NUL (a multi-byte character cut at the
 * end of the sample is allowed); undefined for binary data.
 */
function textOf(head: Buffer): string | undefined {
  if (head.includes(0)) return undefined;
  for (let cut = 0; cut < 4 && cut <= head.length; cut++) {
    const part = head.subarray(0, head.length - cut);
    if (isUtf8(part)) return part.toString('utf8');
  }
  return undefined;
}
