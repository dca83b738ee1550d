import type { FieldError } from '@strata/contracts';

/**
 * Deepest nesting of objects and arrays a JSON body may have; the body itself
 * is level 1. Real documents stay far below it; deeper input only serves to
 * overflow recursive code downstream (class-transformer, record diffs).
 */
export const MAX_JSON_DEPTH = 64;

/** At most this many problems are listed for one request. */
const MAX_PROBLEMS = 100;

/** Longest key or segment quoted in a field path or message. */
const MAX_QUOTED = 64;

/**
 * Why PostgreSQL could not store `text` (as text or in jsonb), or undefined when
 * it can: it refuses the NUL character and lone UTF-16 surrogates.
 */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (!text.isWellFormed()) return 'must not contain a lone UTF-16 surrogate';
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const LETTER_U = 0x75;

const NUL_PROBLEM = 'must not contain the NUL character (\\u0000)';
const SURROGATE_PROBLEM = 'must not contain a lone UTF-16 surrogate';

/**
 * Every problem of a JSON body, found in its raw UTF-8 text before it is
 * parsed: nesting deeper than `maxDepth` (the body is level 1), and strings or
 * keys whose escapes encode NUL (`\u0000`) or a lone UTF-16 surrogate (raw
 * NUL is not JSON, and a raw surrogate is not UTF-8). One linear pass with an
 * explicit, bounded stack: input nested 100,000 levels deep stops at level 65
 * and never reaches `JSON.parse` (which spends 25 times longer on a deep
 * megabyte than on a flat one) nor any recursive code after it. Fields are
 * named as the validation pipe names them (`a.b[2].c`). Text that is not JSON
 * is scanned without harm; the parser then refuses it.
 */
export function findJsonProblems(body: Uint8Array | string, maxDepth = MAX_JSON_DEPTH): FieldError[] {
  const text = typeof body === 'string' ? Buffer.from(body) : body;
  const n = text.length;
  const problems: FieldError[] = [];
  // Per open level (1..maxDepth): array or object, the array index, the object's current key (raw bytes).
  // Reused between calls (the scan is synchronous): no allocation for a small body.
  const { isArray, index, keyStart, keyEnd, expectingKey } = levels(maxDepth);
  let depth = 0;

  const keyAt = (start: number, end: number): string => {
    const raw = Buffer.from(text.buffer, text.byteOffset + start, end - start).toString('utf8');
    if (!raw.includes('\\')) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw;
    }
  };
  /** The path of what sits at the current position of levels 1..`upTo`. */
  const pathTo = (upTo: number): string => {
    let path = '';
    for (let d = 1; d <= upTo; d++) {
      if (isArray[d]) path += `[${index[d]}]`;
      else {
        const key = printable(keyStart[d]! >= 0 ? keyAt(keyStart[d]!, keyEnd[d]!) : '');
        path += path ? `.${key}` : key;
      }
    }
    return path || 'body';
  };

  let i = 0;
  while (i < n && problems.length < MAX_PROBLEMS) {
    const c = text[i]!;
    if (c === QUOTE) {
      const start = i + 1;
      const isKey = depth > 0 && isArray[depth] === 0 && expectingKey[depth] === 1;
      let problem: string | undefined;
      let j = start;
      for (; j < n; j++) {
        const d = text[j];
        if (d === QUOTE) break;
        if (d !== BACKSLASH) continue;
        if (text[j + 1] !== LETTER_U) {
          j++; // \" \\ \n …: skip the escaped character
          continue;
        }
        const unit = hex4(text, j + 2);
        if (unit === 0) problem ??= NUL_PROBLEM;
        else if (unit >= 0xd800 && unit <= 0xdbff) {
          const low = text[j + 6] === BACKSLASH && text[j + 7] === LETTER_U ? hex4(text, j + 8) : -1;
          if (low >= 0xdc00 && low <= 0xdfff) j += 6;
          else problem ??= SURROGATE_PROBLEM;
        } else if (unit >= 0xdc00 && unit <= 0xdfff) problem ??= SURROGATE_PROBLEM;
        j += 5;
      }
      if (isKey) {
        keyStart[depth] = start;
        keyEnd[depth] = j;
        expectingKey[depth] = 0;
        if (problem) problems.push({ field: pathTo(depth), message: `key ${problem}` });
      } else if (problem) {
        problems.push({ field: pathTo(depth), message: problem });
      }
      i = j + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth >= maxDepth) {
        problems.push({
          field: pathTo(depth),
          message: `nests objects and arrays deeper than ${maxDepth} levels (the body counts as one)`,
        });
        break;
      }
      depth++;
      isArray[depth] = c === OPEN_ARRAY ? 1 : 0;
      index[depth] = 0;
      keyStart[depth] = -1;
      expectingKey[depth] = c === OPEN_OBJECT ? 1 : 0;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
    } else if (c === COMMA && depth > 0) {
      if (isArray[depth]) index[depth]!++;
      else {
        expectingKey[depth] = 1;
        keyStart[depth] = -1;
      }
    } else if (c === COLON && depth > 0) {
      expectingKey[depth] = 0;
    }
    i++;
  }
  return problems.slice(0, MAX_PROBLEMS);
}

interface Levels {
  readonly isArray: Uint8Array;
  readonly index: Int32Array;
  readonly keyStart: Int32Array;
  readonly keyEnd: Int32Array;
  readonly expectingKey: Uint8Array;
}

let reusable: Levels = allocateLevels(MAX_JSON_DEPTH);

function levels(maxDepth: number): Levels {
  if (reusable.isArray.length <= maxDepth) reusable = allocateLevels(maxDepth);
  return reusable;
}

function allocateLevels(maxDepth: number): Levels {
  const size = maxDepth + 1;
  return {
    isArray: new Uint8Array(size),
    index: new Int32Array(size),
    keyStart: new Int32Array(size),
    keyEnd: new Int32Array(size),
    expectingKey: new Uint8Array(size),
  };
}

/** The code unit of four hex digits at `at`, or -1 when they are not hex. */
function hex4(text: Uint8Array, at: number): number {
  let value = 0;
  for (let k = at; k < at + 4; k++) {
    const c = text[k];
    const digit =
      c === undefined
        ? -1
        : c >= 0x30 && c <= 0x39
          ? c - 0x30
          : c >= 0x61 && c <= 0x66
            ? c - 0x57
            : c >= 0x41 && c <= 0x46
              ? c - 0x37
              : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** A key or URL piece as it can be shown in a message: NUL and lone surrogates escaped, long text cut. */
export function printable(text: string): string {
  const shown = text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
  return shown.toWellFormed().replaceAll('\u0000', '\\u0000');
}

/**
 * Every problem of an `application/x-www-form-urlencoded` text (a query string
 * or a form body): a name or value that is not well-formed percent-encoded
 * UTF-8, or that decodes to NUL. Fields are the parameter names.
 */
export function findFormTextProblems(text: string): FieldError[] {
  const problems: FieldError[] = [];
  if (text === '') return problems;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    const name = decodeFormComponent(rawName);
    const field = name === undefined ? printable(rawName) : printable(name);
    if (name === undefined) {
      problems.push({ field, message: 'parameter name is not valid percent-encoded UTF-8' });
    } else if (name.includes('\u0000')) {
      problems.push({ field, message: 'parameter name must not contain the NUL character (%00)' });
    }
    const value = decodeFormComponent(rawValue);
    if (value === undefined) problems.push({ field, message: 'is not valid percent-encoded UTF-8' });
    else if (value.includes('\u0000')) problems.push({ field, message: 'must not contain the NUL character (%00)' });
    if (problems.length >= MAX_PROBLEMS) break;
  }
  return problems;
}

/**
 * Every path segment that is not well-formed percent-encoded UTF-8 (the router
 * could not decode it into a route parameter). A NUL in a segment decodes
 * fine: the guard that sees the route names the parameter holding it.
 */
export function findPathProblems(path: string): FieldError[] {
  const problems: FieldError[] = [];
  if (!path.includes('%')) return problems;
  for (const segment of path.split('/')) {
    if (segment.includes('%') && decodeComponent(segment) === undefined) {
      problems.push({
        field: 'path',
        message: `segment '${printable(segment)}' is not valid percent-encoded UTF-8`,
      });
    }
  }
  return problems;
}

function decodeFormComponent(text: string): string | undefined {
  return decodeComponent(text.includes('+') ? text.replaceAll('+', ' ') : text);
}

/** Strict percent-decoding: undefined for a malformed escape or bytes that are not UTF-8 (surrogates included). */
function decodeComponent(text: string): string | undefined {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
