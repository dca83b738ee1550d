import { describe, expect, it } from '@jest/globals';
import type { Collection } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { validateProperties } from '../../schema/validate-properties.js';
import { countConditions } from '../../query/complexity.js';
import { buildListQuery, splitLegacy } from './list-request.js';

const { properties } = validateProperties(
  [
    { name: 'name', type: 'string' },
    { name: 'ssn', type: 'string', isSecret: true },
  ],
  { collectionSlug: 'people', collections: new Map(), newId: () => 'p' },
);
const c = {
  id: '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11',
  workspaceSlug: 'acme',
  properties,
  schemaDiscoveryMode: 'strict',
} as unknown as Collection;

const problemsOf = (legacy: Record<string, unknown>, rest: { filter?: string; sort?: string } = {}) => {
  try {
    buildListQuery(issueWorkspaceScope('acme'), c, { ...rest, legacy });
  } catch (err) {
    if (err instanceof StrataException) return err.details;
    throw err;
  }
  return [];
};

describe('buildListQuery', () => {
  it.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'])(
    'names no legacy operator or field with %s',
    (name) => {
      expect(problemsOf({ [`data.name[${name}]`]: 'x' })).toEqual([
        { field: `data.name[${name}]`, message: expect.stringContaining('is not a filter parameter') },
      ]);
      expect(problemsOf({ [`data.${name}`]: 'x' })).toEqual([
        { field: `data.${name}`, message: expect.stringContaining(name) },
      ]);
      expect(problemsOf({}, { filter: `${name}:x`, sort: `-${name}` })).toEqual([
        { field: 'filter', message: expect.stringContaining(name) },
        { field: 'sort', message: expect.stringContaining(name) },
      ]);
    },
  );

  it('refuses a secret field in the filter, the sort and the legacy parameters', () => {
    expect(problemsOf({ 'data.ssn[startswith]': 'A' }, { filter: 'ssn:x', sort: 'ssn' })).toEqual([
      { field: 'filter', message: expect.stringContaining('"ssn" is a secret field') },
      { field: 'data.ssn[startswith]', message: expect.stringContaining('"data.ssn" is a secret field') },
      { field: 'sort', message: expect.stringContaining('"ssn" is a secret field') },
    ]);
  });
});

describe('splitLegacy', () => {
  it('keeps a parameter named __proto__ a parameter', () => {
    const query = Object.fromEntries([
      ['__proto__', ['a', 'b']],
      ['data.__proto__', 'x'],
      ['limit', '5'],
    ]);
    const { legacy, rest } = splitLegacy(query);
    expect(Object.getPrototypeOf(rest)).toBe(Object.prototype);
    expect(Object.keys(rest)).toEqual(['__proto__', 'limit']);
    expect(Object.keys(legacy)).toEqual(['data.__proto__']);
  });
});

describe('countConditions', () => {
  it('counts a where of any depth without exhausting the stack', () => {
    let where: Record<string, unknown> = { 'data.a': { eq: 1 } };
    for (let i = 0; i < 100_000; i++) where = i % 2 ? { not: where } : { and: [where, { 'data.b': { eq: 2 } }] };
    expect(countConditions(where)).toBe(50_001);
  });
});
