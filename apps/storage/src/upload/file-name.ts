/** Longest file name, in UTF-8 bytes (S3's key limit). */
export const MAX_NAME_BYTES = 1024;
/** Longest name made from an uploaded file's original name. */
const MAX_ORIGINAL_BYTES = 255;

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Why `name` cannot name a file, or undefined. A name is a relative path of
 * `/`-separated segments (`avatars/2026/me.png`): no NUL or other control
 * character, no backslash, not absolute (`/x`, `C:x`), no empty, `.` or `..`
 * segment, well-formed Unicode, at most {@link MAX_NAME_BYTES} bytes. Pure.
 */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (!name.isWellFormed()) return 'must be well-formed Unicode';
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `must be at most ${MAX_NAME_BYTES} bytes`;
  if (CONTROL.test(name)) return 'must not contain NUL or other control characters';
  if (name.includes('\\')) return 'must not contain a backslash (use / between folders)';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'must be a relative path, not an absolute one';
  const segments = name.split('/');
  if (segments.some((s) => s === '..')) return "must not contain a '..' segment";
  if (segments.some((s) => s === '.')) return "must not contain a '.' segment";
  if (segments.some((s) => s.length === 0)) return 'must not contain an empty segment (// or a trailing /)';
  if (segments.some((s) => s.trim() !== s)) return 'segments must not start or end with spaces';
  return undefined;
}

/**
 * The name a file gets from its original name when the upload names none: its
 * last path segment (either separator), NFC, without control characters,
 * trimmed, cut to 255 bytes at a character boundary; `file` when nothing usable
 * is left (`..`, an empty name). Always passes {@link nameProblem}. Pure.
 */
export function sanitiseOriginalName(original: string | undefined): string {
  const raw = (original ?? '').toWellFormed().normalize('NFC');
  const last = raw.split(/[/\\]/).pop() ?? '';
  let name = last.replace(CONTROL_ALL, '').trim();
  if (/^[A-Za-z]:/.test(name)) name = name.slice(2).trim();
  while (Buffer.byteLength(name, 'utf8') > MAX_ORIGINAL_BYTES) name = [...name].slice(0, -1).join('').trimEnd();
  if (name === '' || name === '.' || name === '..') return 'file';
  return name;
}
