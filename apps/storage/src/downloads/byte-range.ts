/** What a `Range` header asks of a file of `size` bytes. */
export type RangeAsk =
  /** No usable range: the whole file, 200 (no header, another unit, several ranges, a malformed value). */
  | { readonly kind: 'whole' }
  /** Bytes `start` to `end` inclusive, 206. */
  | { readonly kind: 'part'; readonly start: number; readonly end: number }
  /** A well-formed range outside the file: 416. */
  | { readonly kind: 'unsatisfiable' };

const ONE_RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * Reads a `Range` header (RFC 9110 §14.1.2) for one range: `bytes=a-b`, `bytes=a-`
 * or the suffix `bytes=-n`. Several ranges are answered whole (allowed by the RFC,
 * and no multipart/byteranges to build); a malformed header is ignored as the RFC
 * says; a range that starts past the end is unsatisfiable. Pure.
 */
export function parseRange(header: string | undefined, size: number): RangeAsk {
  if (header === undefined) return { kind: 'whole' };
  const m = ONE_RANGE.exec(header.trim());
  if (!m) return { kind: 'whole' };
  const [, first, last] = m as unknown as [string, string, string];
  if (first === '' && last === '') return { kind: 'whole' };
  if (first.length > 15 || last.length > 15) return { kind: 'whole' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Number.MAX_SAFE_INTEGER : Number(last);
  if (end < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end: Math.min(end, size - 1) };
}
