import type { PropertyDefinition } from '@strata/contracts';
import { KeyRing } from '@strata/crypto';
import { isPlainObject } from '../schema/issues.js';

/** What a secret field shows to a caller without `secrets:reveal`, and in every event, changelog and history. */
export const SECRET_MASK = '********';

/**
 * Where secret strings live in record data: a secret string property (`isSecret`),
 * or an object property, or an array of objects (`itemSchema`), with secrets inside.
 */
export type SecretNode =
  | { readonly kind: 'secret' }
  | { readonly kind: 'object'; readonly fields: SecretFields }
  | { readonly kind: 'items'; readonly fields: SecretFields };
export type SecretFields = ReadonlyMap<string, SecretNode>;

/**
 * Paths of the secret strings of a schema: `apiKey`, `credentials.token` (inside an
 * object), `contacts[].pin` (inside each object of an array).
 */
export function secretPaths(properties: readonly PropertyDefinition[]): string[] {
  return stringPaths(properties, true);
}

/** Paths of the string properties that are not secret (where a secret may be turned off). */
export function plainStringPaths(properties: readonly PropertyDefinition[]): string[] {
  return stringPaths(properties, false);
}

function stringPaths(properties: readonly PropertyDefinition[], secret: boolean, prefix = ''): string[] {
  return properties.flatMap((p) => {
    const path = `${prefix}${p.name}`;
    if (p.type === 'string') return p.isSecret === secret ? [path] : [];
    if (p.type === 'object') return stringPaths(p.properties, secret, `${path}.`);
    if (p.type === 'array' && p.itemSchema) return stringPaths(p.itemSchema, secret, `${path}[].`);
    return [];
  });
}

/** The tree of a list of paths (see {@link secretPaths}). */
export function treeOf(paths: Iterable<string>): SecretFields {
  const root = new Map<string, SecretNode>();
  for (const path of paths) {
    const segments = path.split('.');
    let level = root;
    segments.forEach((segment, i) => {
      const items = segment.endsWith('[]');
      const name = items ? segment.slice(0, -2) : segment;
      if (i === segments.length - 1) {
        level.set(name, { kind: 'secret' });
        return;
      }
      const existing = level.get(name);
      if (existing && existing.kind !== 'secret') {
        level = existing.fields as Map<string, SecretNode>;
      } else {
        const fields = new Map<string, SecretNode>();
        level.set(name, { kind: items ? 'items' : 'object', fields });
        level = fields;
      }
    });
  }
  return root;
}

const trees = new WeakMap<readonly PropertyDefinition[], SecretFields>();

/** The secret tree of a schema; computed once per properties list (collections are cached). */
export function secretFields(properties: readonly PropertyDefinition[]): SecretFields {
  let tree = trees.get(properties);
  if (!tree) {
    tree = treeOf(secretPaths(properties));
    trees.set(properties, tree);
  }
  return tree;
}

/**
 * What to do with one stored value: at a secret location (`path` names it), and,
 * when `stray` is given, with an envelope found anywhere else (a secret field that
 * was removed or renamed left it behind: it can no longer be opened where it is).
 * Returning `undefined` removes the field.
 */
export interface SecretVisitor {
  secret(value: unknown, path: string): unknown;
  /** `path` is where the envelope sits, named as secret paths are (`old.token`, `list[].pin`). */
  stray?(envelope: string, path: string): unknown;
}

/**
 * A copy of `data` with the visitor applied; containers are copied only where
 * something changed, so untouched parts stay shared with the input.
 */
export function mapSecrets(
  fields: SecretFields,
  data: Record<string, unknown>,
  visitor: SecretVisitor,
): Record<string, unknown> {
  if (fields.size === 0 && (!visitor.stray || !mayHoldEnvelope(data))) return data;
  return visitObject(fields, data, visitor, '');
}

/**
 * Whether `value` has a string that may be an envelope (`sv1.` prefix) where a stray
 * visit looks (plain objects and arrays, at any depth). A cheap test, without copies:
 * data of a collection with no secret field skips the walk when it says no, and a stray
 * envelope (left by a removed secret field) always says yes.
 */
function mayHoldEnvelope(value: unknown): boolean {
  if (typeof value === 'string') return value.startsWith('sv1.');
  if (Array.isArray(value)) {
    for (const item of value) if (mayHoldEnvelope(item)) return true;
    return false;
  }
  if (isPlainObject(value)) {
    for (const key in value) if (Object.hasOwn(value, key) && mayHoldEnvelope(value[key])) return true;
  }
  return false;
}

function visitObject(
  fields: SecretFields | undefined,
  data: Record<string, unknown>,
  visitor: SecretVisitor,
  prefix: string,
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(data)) {
    const value = data[key];
    const node = fields?.get(key);
    const next = node
      ? visitNode(node, value, visitor, `${prefix}${key}`)
      : visitor.stray
        ? visitStray(value, visitor, `${prefix}${key}`)
        : value;
    if (next === value) continue;
    out ??= { ...data };
    if (next === undefined) delete out[key];
    else out[key] = next;
  }
  return out ?? data;
}

function visitNode(node: SecretNode, value: unknown, visitor: SecretVisitor, path: string): unknown {
  if (value === undefined) return value;
  switch (node.kind) {
    case 'secret':
      return visitor.secret(value, path);
    case 'object':
      return isPlainObject(value)
        ? visitObject(node.fields, value, visitor, `${path}.`)
        : visitStray(value, visitor, path);
    case 'items':
      return Array.isArray(value)
        ? sameOrCopy(value, (item) =>
            isPlainObject(item)
              ? visitObject(node.fields, item, visitor, `${path}[].`)
              : visitStray(item, visitor, `${path}[]`),
          )
        : visitStray(value, visitor, path);
  }
}

/** Envelopes outside the secret locations, at any depth. */
function visitStray(value: unknown, visitor: SecretVisitor, path: string): unknown {
  if (!visitor.stray) return value;
  if (typeof value === 'string') return KeyRing.isEnvelope(value) ? visitor.stray(value, path) : value;
  if (Array.isArray(value)) return sameOrCopy(value, (item) => visitStray(item, visitor, `${path}[]`));
  if (isPlainObject(value)) return visitObject(undefined, value, visitor, `${path}.`);
  return value;
}

function sameOrCopy(list: unknown[], map: (item: unknown, index: number) => unknown): unknown[] {
  let out: unknown[] | undefined;
  list.forEach((item, i) => {
    const next = map(item, i);
    if (next === item) return;
    out ??= [...list];
    out[i] = next;
  });
  return out ?? list;
}

/** The mask of a stored secret value: null stays null (the field is empty), anything else is hidden. */
export function maskValue(value: unknown): unknown {
  return value === null ? null : SECRET_MASK;
}

/** Secret values replaced by the mask, and leftover envelopes too. */
export function maskSecrets(fields: SecretFields, data: Record<string, unknown>): Record<string, unknown> {
  return mapSecrets(fields, data, { secret: maskValue, stray: () => SECRET_MASK });
}

/** Secret fields removed (what computed expressions see: they never read a secret). */
export function withoutSecrets(fields: SecretFields, data: Record<string, unknown>): Record<string, unknown> {
  return mapSecrets(fields, data, { secret: () => undefined, stray: () => undefined });
}

export type Changes = Record<string, { old: unknown; new: unknown }>;

/** Per-field changes (`{field: {old, new}}`, top-level fields) with every secret inside masked. */
export function maskChanges(fields: SecretFields, changes: Changes): Changes {
  if (fields.size === 0 && !mayNeedMasking(changes)) return changes;
  let out: Changes | undefined;
  for (const [field, change] of Object.entries(changes)) {
    const node = fields.get(field);
    const one = new Map([[field, node ?? { kind: 'object' as const, fields: new Map() }]]);
    const masked = {
      old: maskSecrets(one, { [field]: change.old })[field] ?? null,
      new: maskSecrets(one, { [field]: change.new })[field] ?? null,
    };
    if (masked.old === change.old && masked.new === change.new) continue;
    out ??= { ...changes };
    out[field] = masked;
  }
  return out ?? changes;
}

/** Whether the walk of {@link maskChanges} could change anything of a schema without secrets. */
function mayNeedMasking(changes: Changes): boolean {
  for (const field in changes) {
    if (!Object.hasOwn(changes, field)) continue;
    const change = changes[field];
    // The walk answers a missing side as null.
    if (change === undefined || change.old === undefined || change.new === undefined) return true;
    if (mayHoldEnvelope(change.old) || mayHoldEnvelope(change.new)) return true;
  }
  return false;
}

/**
 * Secret fields hold strings (or null), even in a write that skips validation:
 * only strings are sealed, so anything else would be stored in plain.
 */
export function nonStringSecrets(fields: SecretFields, data: Record<string, unknown>): string[] {
  const bad: string[] = [];
  mapSecrets(fields, data, {
    secret: (value, path) => {
      if (value !== null && typeof value !== 'string') bad.push(path);
      return value;
    },
  });
  return bad;
}

/**
 * `next` with every secret that holds exactly the mask taken from `previous` at
 * the same place (the same field; the same position of an array of objects),
 * when a string is stored there: a caller without `secrets:reveal` reads the
 * mask, and writing back what it read must not replace the secret with it.
 */
export function keepMaskedSecrets(
  fields: SecretFields,
  next: Record<string, unknown>,
  previous: Record<string, unknown> | undefined,
): Record<string, unknown> {
  if (fields.size === 0 || previous === undefined) return next;
  let out: Record<string, unknown> | undefined;
  for (const [key, node] of fields) {
    if (!Object.hasOwn(next, key) || !Object.hasOwn(previous, key)) continue;
    const value = next[key];
    const before = previous[key];
    let kept: unknown = value;
    if (node.kind === 'secret') {
      if (value === SECRET_MASK && typeof before === 'string') kept = before;
    } else if (node.kind === 'object') {
      if (isPlainObject(value) && isPlainObject(before)) kept = keepMaskedSecrets(node.fields, value, before);
    } else if (Array.isArray(value) && Array.isArray(before)) {
      kept = sameOrCopy(value, (item, i) =>
        isPlainObject(item) && isPlainObject(before[i]) ? keepMaskedSecrets(node.fields, item, before[i]) : item,
      );
    }
    if (kept === value) continue;
    out ??= { ...next };
    out[key] = kept;
  }
  return out ?? next;
}
