import type { JsonValue } from '@strata/sandbox';

/** What a secret is replaced with in a run's stored logs and result: the mask record secrets show (docs/data.md). */
export const SECRET_MASK = '********';

/**
 * Secrets at least this long (in characters) are masked wherever they occur in
 * a text; shorter ones only where a whole string (a log message, a returned
 * string, a key) or a number equals them. Masking every `7` of a log for a
 * one-character secret would garble the log and show where the secret's
 * character stood (docs/compute.md, "Encrypted parameters").
 */
export const MIN_EMBEDDED_SECRET_LENGTH = 4;

/** Replaces the secrets in what a run stores. */
export interface SecretMasker {
  text(value: string): string;
  json(value: JsonValue): JsonValue;
}

const NOTHING: SecretMasker = { text: (value) => value, json: (value) => value };

/**
 * The texts of secret values: strings, and numbers as JSON writes them, at
 * any depth of objects and arrays (a secret may be a JSON value); empty
 * strings, booleans and null are no secret to mask.
 */
export function secretTexts(values: readonly unknown[]): string[] {
  const out = new Set<string>();
  const visit = (value: unknown, depth: number): void => {
    if (typeof value === 'string') {
      if (value !== '') out.add(value);
    } else if (typeof value === 'number' && Number.isFinite(value)) {
      out.add(JSON.stringify(value));
    } else if (typeof value === 'object' && value !== null && depth < 32) {
      for (const item of Array.isArray(value) ? value : Object.values(value)) visit(item, depth + 1);
    }
  };
  for (const value of values) visit(value, 0);
  return [...out];
}

const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/**
 * Masks `secrets` (their texts: {@link secretTexts}) in strings: each occurrence
 * of one of at least {@link MIN_EMBEDDED_SECRET_LENGTH} characters, as written or
 * as JSON escapes it (a logged object is logged as JSON), longest first; a
 * string, key or number that equals a shorter one whole.
 */
export function secretMasker(secrets: readonly string[]): SecretMasker {
  if (secrets.length === 0) return NOTHING;
  const whole = new Set(secrets);
  const embedded = new Set<string>();
  for (const secret of secrets) {
    if ([...secret].length < MIN_EMBEDDED_SECRET_LENGTH) continue;
    embedded.add(secret);
    embedded.add(JSON.stringify(secret).slice(1, -1));
  }
  const pattern = embedded.size
    ? new RegExp(
        [...embedded]
          .sort((a, b) => b.length - a.length)
          .map(escapeRegExp)
          .join('|'),
        'g',
      )
    : undefined;
  const text = (value: string): string => {
    if (whole.has(value)) return SECRET_MASK;
    return pattern ? value.replace(pattern, SECRET_MASK) : value;
  };
  const json = (value: JsonValue): JsonValue => {
    if (typeof value === 'string') return text(value);
    if (typeof value === 'number') return whole.has(JSON.stringify(value)) ? SECRET_MASK : value;
    if (Array.isArray(value)) return value.map(json);
    if (value !== null && typeof value === 'object') {
      // From entries: a key named `__proto__` stays a key.
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [text(key), json(item)]));
    }
    return value;
  };
  return { text, json };
}
