import { describe, expect, it } from '@jest/globals';
import type { PropertyDefinition } from '@strata/contracts';
import { FailureTally, recordProblems, referenceValues, withoutSecretValues } from './record-fit.js';

const defs = (list: unknown[]) => list as PropertyDefinition[];

describe('recordProblems', () => {
  const schema = {
    schemaDiscoveryMode: 'strict' as const,
    properties: defs([
      { name: 'age', type: 'string', required: false, nullable: false, isUnique: false, immutable: true },
      { name: 'email', type: 'string', required: true, nullable: false, isUnique: false, immutable: false },
      { name: 'n', type: 'number', expression: 'age * 2', computedMode: 'persisted', required: false },
    ]),
  };

  it('checks stored data as the next write would: types, required fields, unknown fields', () => {
    const fields = recordProblems(schema, { age: 41, legacy: true, n: 'stored' }).map((p) => p.field);
    expect(fields.sort()).toEqual(['data.age', 'data.email', 'data.legacy']);
  });

  it('finds nothing in data that fits, immutable and computed values included', () => {
    expect(recordProblems(schema, { age: '41', email: 'a@b.c', n: 82 })).toEqual([]);
  });

  it('accepts unknown fields outside strict mode', () => {
    expect(recordProblems({ ...schema, schemaDiscoveryMode: 'auto-evolving' }, { email: 'x', extra: 1 })).toEqual([]);
  });
});

describe('withoutSecretValues', () => {
  const before = defs([{ name: 'pin', type: 'string', isSecret: true }]);
  const after = defs([{ name: 'token', type: 'object', properties: [{ name: 'v', type: 'string', isSecret: true }] }]);

  it('hides the message of a problem at a field secret before or after the change', () => {
    const problems = [
      { field: 'data.pin', message: 'must not be "1234"' },
      { field: 'data.token.v', message: 'must be a string' },
      { field: 'data.pinned', message: 'must be a boolean' },
    ];
    expect(withoutSecretValues(problems, before, after)).toEqual([
      { field: 'data.pin', message: 'does not fit (a secret field: the reason is not shown)' },
      { field: 'data.token.v', message: 'does not fit (a secret field: the reason is not shown)' },
      { field: 'data.pinned', message: 'must be a boolean' },
    ]);
  });
});

describe('referenceValues', () => {
  it('collects the string values of reference fields, single or many', () => {
    const props = defs([
      { name: 'one', type: 'reference', target: 'a' },
      { name: 'many', type: 'reference', target: 'b', relationship: 'many-to-many' },
      { name: 'none', type: 'reference', target: 'c' },
      { name: 'plain', type: 'string' },
    ]);
    const out = referenceValues(props, { one: 'x', many: ['y', 3, 'z'], none: null, plain: 'p' });
    expect(out.map((r) => [r.property.name, r.values])).toEqual([
      ['one', ['x']],
      ['many', ['y', 'z']],
    ]);
  });
});

describe('FailureTally', () => {
  it('counts every failing record and field, and keeps a bounded sample', () => {
    const tally = new FailureTally(2, 1, 2);
    tally.add('r1', []);
    tally.add('r2', [
      { field: 'data.a', message: 'x' },
      { field: 'data.a', message: 'y' },
    ]);
    tally.add('r3', [{ field: 'data.b', message: 'z' }]);
    tally.add('r4', [
      { field: 'data.a', message: 'w' },
      { field: 'data.c', message: 'past the fields counted' },
    ]);
    expect(tally.failed).toBe(3);
    expect(tally.byField).toEqual({ 'data.a': 2, 'data.b': 1 });
    expect(tally.sample).toEqual([
      { id: 'r2', errors: [{ field: 'data.a', message: 'x' }] },
      { id: 'r3', errors: [{ field: 'data.b', message: 'z' }] },
    ]);
  });
});
