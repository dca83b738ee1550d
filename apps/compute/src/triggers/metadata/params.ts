import { child, copyJson, hasOwn, isPlainObject, Issues, type JsonValue, own } from './reading.js';

/** A parameter to be encrypted by the caller before it is stored: `{value, encrypt: true}`. */
export interface EncryptRequest {
  value: JsonValue;
  encrypt: true;
}

/** A parameter as stored and returned by GET: the ciphertext envelope and the key version that sealed it. */
export interface EncryptedParam {
  value: string;
  encrypted: true;
  keyVersion: number;
}

/**
 * One static parameter. Structurally any JSON value; an object with an own
 * `encrypt` or `encrypted` key is always one of the two encrypted forms
 * (checked), never an ordinary object.
 */
export type TriggerParamValue = JsonValue | EncryptRequest | EncryptedParam;
export type TriggerParams = Record<string, TriggerParamValue>;

export const MAX_PARAMS = 100;
export const MAX_PARAM_NAME_LENGTH = 200;

/**
 * Parameter names starting with this are refused: earlier releases sealed a
 * trigger's signing secret beside its parameters, as the parameter `#signingSecret`
 * (docs/compute.md, "Encrypted parameters").
 */
export const RESERVED_PARAM_PREFIX = '#';

/**
 * Why a parameter name is refused, or undefined: one starting with `#`
 * ({@link RESERVED_PARAM_PREFIX}), or one that is not well-formed Unicode (a
 * lone surrogate, which a sealed value's binding cannot tell apart from U+FFFD).
 */
export function paramNameProblem(name: string): string | undefined {
  if (name.startsWith(RESERVED_PARAM_PREFIX)) {
    return `parameter names must not start with ${RESERVED_PARAM_PREFIX} (reserved for the platform)`;
  }
  if (!name.isWellFormed()) return 'parameter names must be well-formed Unicode (no lone surrogate)';
  return undefined;
}

export function isEncryptRequest(value: unknown): value is EncryptRequest {
  return isPlainObject(value) && own(value, 'encrypt') === true && hasOwn(value, 'value');
}

export function isEncryptedParam(value: unknown): value is EncryptedParam {
  return isPlainObject(value) && own(value, 'encrypted') === true && typeof own(value, 'value') === 'string';
}

/**
 * Checks `params` (absent: `{}`) and returns a copy, `{value, encrypt: false}`
 * unwrapped to its value. Problems go to `issues`; undefined when there were any.
 */
export function checkParams(value: unknown, path: string, issues: Issues): TriggerParams | undefined {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    issues.add(path, 'must be an object of static parameters (name: value)');
    return undefined;
  }
  const keys = Object.keys(value);
  if (keys.length > MAX_PARAMS) {
    issues.add(path, `must have at most ${MAX_PARAMS} parameters`);
    return undefined;
  }
  const before = issues.count;
  const entries: [string, TriggerParamValue][] = [];
  for (const key of keys) {
    const at = child(path, key);
    if (key.length === 0 || key.length > MAX_PARAM_NAME_LENGTH) {
      issues.add(at, `parameter names must be 1 to ${MAX_PARAM_NAME_LENGTH} characters`);
      continue;
    }
    const refused = paramNameProblem(key);
    if (refused) {
      issues.add(at, refused);
      continue;
    }
    const checked = checkParamValue(own(value, key), at, issues);
    if (checked !== undefined) entries.push([key, checked]);
  }
  return issues.count === before ? Object.fromEntries<TriggerParamValue>(entries) : undefined;
}

/**
 * One parameter value: plain JSON, `{value, encrypt: boolean}` (no other keys;
 * `encrypt: false` is unwrapped to the value) or the stored form
 * `{value: <ciphertext>, encrypted: true, keyVersion: <int ≥ 1>}`.
 */
export function checkParamValue(value: unknown, path: string, issues: Issues): TriggerParamValue | undefined {
  if (isPlainObject(value) && (hasOwn(value, 'encrypt') || hasOwn(value, 'encrypted'))) {
    if (hasOwn(value, 'encrypt') && hasOwn(value, 'encrypted')) {
      issues.add(path, 'has both encrypt and encrypted: send {value, encrypt: true} or the stored encrypted form');
      return undefined;
    }
    return hasOwn(value, 'encrypt')
      ? checkEncryptRequest(value, path, issues)
      : checkEncryptedParam(value, path, issues);
  }
  return copyJson(value, path, issues);
}

function checkEncryptRequest(
  value: Record<string, unknown>,
  path: string,
  issues: Issues,
): EncryptRequest | JsonValue | undefined {
  const before = issues.count;
  for (const key of Object.keys(value)) {
    if (key !== 'value' && key !== 'encrypt') {
      issues.add(child(path, key), 'is not allowed beside encrypt (a parameter to encrypt is {value, encrypt: true})');
    }
  }
  const encrypt = own(value, 'encrypt');
  if (typeof encrypt !== 'boolean') issues.add(`${path}.encrypt`, 'must be a boolean');
  let plain: JsonValue | undefined;
  if (!hasOwn(value, 'value')) issues.add(`${path}.value`, 'is required beside encrypt');
  else plain = copyJson(own(value, 'value'), `${path}.value`, issues);
  if (issues.count !== before || plain === undefined) return undefined;
  return encrypt === true ? { value: plain, encrypt: true } : plain;
}

function checkEncryptedParam(value: Record<string, unknown>, path: string, issues: Issues): EncryptedParam | undefined {
  const before = issues.count;
  for (const key of Object.keys(value)) {
    if (key !== 'value' && key !== 'encrypted' && key !== 'keyVersion') {
      issues.add(child(path, key), 'is not part of an encrypted parameter ({value, encrypted: true, keyVersion})');
    }
  }
  const encrypted = own(value, 'encrypted');
  const ciphertext = own(value, 'value');
  const keyVersion = own(value, 'keyVersion');
  if (encrypted !== true) {
    issues.add(`${path}.encrypted`, 'must be true (to encrypt a new value send {value, encrypt: true})');
  }
  if (typeof ciphertext !== 'string' || ciphertext.length === 0) {
    issues.add(`${path}.value`, 'must be the ciphertext string returned by GET');
  }
  if (typeof keyVersion !== 'number' || !Number.isSafeInteger(keyVersion) || keyVersion < 1) {
    issues.add(`${path}.keyVersion`, 'must be a positive integer');
  }
  if (issues.count !== before) return undefined;
  return { value: ciphertext as string, encrypted: true, keyVersion: keyVersion as number };
}
