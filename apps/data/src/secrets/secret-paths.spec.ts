import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { PropertyDefinition } from '@strata/contracts';
import { KeyRing } from '@strata/crypto';
import {
  mapSecrets,
  maskChanges,
  maskSecrets,
  nonStringSecrets,
  plainStringPaths,
  secretFields,
  secretPaths,
  treeOf,
  withoutSecrets,
} from '../secrets/secret-paths.js';

const common = { id: 'x', required: false, nullable: true, isUnique: false, immutable: false };
const str = (name: string, isSecret = false): PropertyDefinition => ({ ...common, name, type: 'string', isSecret });

const schema: PropertyDefinition[] = [
  str('title'),
  str('apiKey', true),
  {
    ...common,
    name: 'credentials',
    type: 'object',
    requiredProperties: [],
    strictProperties: false,
    properties: [
      str('user'),
      str('token', true),
      {
        ...common,
        name: 'inner',
        type: 'object',
        requiredProperties: [],
        strictProperties: false,
        properties: [str('pin', true)],
      },
    ],
  },
  {
    ...common,
    name: 'contacts',
    type: 'array',
    items: { type: 'object' },
    strictProperties: true,
    uniqueItems: false,
    itemSchema: [str('name'), str('phone', true)],
  },
  { ...common, name: 'tags', type: 'array', items: { type: 'string' }, strictProperties: true, uniqueItems: false },
];

const envelope = KeyRing.parse(`1:${randomBytes(32).toString('base64')}`).encrypt('left behind', 'a');

const data = {
  title: 'hello',
  apiKey: 'k-1',
  credentials: { user: 'u', token: 't-1', inner: { pin: '1234' } },
  contacts: [{ name: 'a', phone: '555-1' }, { name: 'b', phone: null }, 'not an object'],
  tags: ['x'],
};

describe('secret paths', () => {
  it('finds secret strings at every depth, objects and arrays of objects', () => {
    expect(secretPaths(schema)).toEqual(['apiKey', 'credentials.token', 'credentials.inner.pin', 'contacts[].phone']);
    expect(plainStringPaths(schema)).toEqual(['title', 'credentials.user', 'contacts[].name']);
    expect(treeOf(secretPaths(schema))).toEqual(secretFields(schema));
  });

  it('masks every secret and nothing else, without touching the input', () => {
    const before = structuredClone(data);
    expect(maskSecrets(secretFields(schema), data)).toEqual({
      title: 'hello',
      apiKey: '********',
      credentials: { user: 'u', token: '********', inner: { pin: '********' } },
      contacts: [{ name: 'a', phone: '********' }, { name: 'b', phone: null }, 'not an object'],
      tags: ['x'],
    });
    expect(data).toEqual(before);
  });

  it('shares what it does not change', () => {
    const masked = maskSecrets(secretFields(schema), data);
    expect(masked['tags']).toBe(data.tags);
    const noSecrets = { title: 'x', tags: ['y'] };
    expect(maskSecrets(secretFields([str('title')]), noSecrets)).toBe(noSecrets);
  });

  it('names each secret by its path when mapping', () => {
    const seen: string[] = [];
    mapSecrets(secretFields(schema), data, {
      secret: (value, path) => {
        seen.push(`${path}=${String(value)}`);
        return value;
      },
    });
    expect(seen).toEqual([
      'apiKey=k-1',
      'credentials.token=t-1',
      'credentials.inner.pin=1234',
      'contacts[].phone=555-1',
      'contacts[].phone=null',
    ]);
  });

  it('masks envelopes outside the secret fields (a removed secret field left them), at any depth', () => {
    const stray = { title: envelope, old: { deep: [envelope, 'plain sv1.text'] } };
    expect(maskSecrets(secretFields(schema), stray)).toEqual({
      title: '********',
      old: { deep: ['********', 'plain sv1.text'] },
    });
  });

  it('names where a stray envelope sits, as secret paths are named', () => {
    const seen: string[] = [];
    mapSecrets(
      secretFields(schema),
      { old: envelope, o: { list: [{ pin: envelope }, envelope] } },
      {
        secret: (value) => value,
        stray: (found, path) => {
          seen.push(path);
          return found;
        },
      },
    );
    expect(seen).toEqual(['old', 'o.list[].pin', 'o.list[]']);
  });

  it('removes secrets (and envelopes) from what expressions see', () => {
    expect(withoutSecrets(secretFields(schema), { ...data, stray: envelope })).toEqual({
      title: 'hello',
      credentials: { user: 'u', inner: {} },
      contacts: [{ name: 'a' }, { name: 'b' }, 'not an object'],
      tags: ['x'],
    });
  });

  it('masks the changes of secret fields, nested ones inside whole-object changes too', () => {
    const changes = {
      title: { old: 'a', new: 'b' },
      apiKey: { old: null, new: 'k-2' },
      credentials: { old: { user: 'u', token: 't-1' }, new: { user: 'u', token: 't-2' } },
      contacts: { old: null, new: [{ name: 'n', phone: '555' }] },
    };
    expect(maskChanges(secretFields(schema), changes)).toEqual({
      title: { old: 'a', new: 'b' },
      apiKey: { old: null, new: '********' },
      credentials: { old: { user: 'u', token: '********' }, new: { user: 'u', token: '********' } },
      contacts: { old: null, new: [{ name: 'n', phone: '********' }] },
    });
  });

  it('names secret fields that hold something other than a string', () => {
    expect(
      nonStringSecrets(secretFields(schema), { apiKey: 42, credentials: { token: null }, contacts: [{ phone: {} }] }),
    ).toEqual(['apiKey', 'contacts[].phone']);
  });

  describe('a schema without secret fields', () => {
    const plain = secretFields([str('title'), str('notes')]);

    it('answers data without an envelope as it is, without a copy', () => {
      const data = { title: 'sv1 is not sv1.', list: [{ a: 'x' }, 1, null], when: new Date(0) };
      expect(maskSecrets(plain, data)).toBe(data);
      expect(withoutSecrets(plain, data)).toBe(data);
      const changes = { title: { old: null, new: 'a' }, list: { old: [1], new: [{ a: 'x' }] } };
      expect(maskChanges(plain, changes)).toBe(changes);
    });

    it('still masks the envelopes a removed secret field left, at any depth', () => {
      expect(maskSecrets(plain, { title: 'a', old: { deep: [{ pin: envelope }] } })).toEqual({
        title: 'a',
        old: { deep: [{ pin: '********' }] },
      });
      expect(withoutSecrets(plain, { title: 'a', old: envelope })).toEqual({ title: 'a' });
      expect(
        maskChanges(plain, { title: { old: 'a', new: 'b' }, old: { old: { deep: [envelope] }, new: null } }),
      ).toEqual({ title: { old: 'a', new: 'b' }, old: { old: { deep: ['********'] }, new: null } });
    });

    it('answers a missing side of a change as null, as the full walk does', () => {
      const changes = { title: { old: undefined, new: 'a' } } as unknown as Parameters<typeof maskChanges>[1];
      expect(maskChanges(plain, changes)).toEqual({ title: { old: null, new: 'a' } });
    });
  });
});
