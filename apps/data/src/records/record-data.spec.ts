import { describe, expect, it } from '@jest/globals';
import type { Collection, PropertyDefinition } from '@strata/contracts';
import { Issues } from '../schema/issues.js';
import { validateProperties } from '../schema/validate-properties.js';
import { computeFields, prepareRecordData } from './record-data.js';

let ids = 0;
function schema(raw: unknown[], mode: Collection['schemaDiscoveryMode'] = 'strict') {
  const { properties, issues } = validateProperties(raw, {
    collectionSlug: 'things',
    collections: new Map(),
    newId: () => `p${++ids}`,
  });
  expect(issues.list).toEqual([]);
  return { properties, schemaDiscoveryMode: mode };
}

const messages = (issues: Issues) => issues.list.map((i) => `${i.field}: ${i.message}`);

const invoice = schema([
  { name: 'number', type: 'string', immutable: true, required: true },
  { name: 'status', type: 'string', enum: ['open', 'paid'], default: 'open' },
  { name: 'amount', type: 'number', minimum: 0 },
  { name: 'seq', type: 'number', autoIncrement: { startAt: 1 } },
  { name: 'total', type: 'number', expression: 'amount * 1.2' },
  { name: 'note', type: 'string', nullable: true },
]);

describe('prepareRecordData', () => {
  it('applies defaults on create and lists every problem at once', () => {
    const ok = prepareRecordData(invoice, 'create', { number: 'A-1', amount: 10 });
    expect(messages(ok.issues)).toEqual([]);
    expect(ok.data).toEqual({ number: 'A-1', amount: 10, status: 'open' });

    const bad = prepareRecordData(invoice, 'create', { amount: -1, status: 'void', seq: 5, total: 1, extra: true });
    expect(messages(bad.issues)).toEqual([
      'data.seq: is assigned automatically and cannot be set',
      'data.total: is computed and cannot be set',
      'data.number: is required',
      'data.status: must be one of ["open","paid"]',
      'data.amount: must be at least 0',
      'data.extra: is not a property of this object',
    ]);
  });

  it('merges a patch into the stored data, null removing a field', () => {
    const stored = { number: 'A-1', status: 'open', amount: 10, seq: 1, note: 'x' };
    const patched = prepareRecordData(invoice, 'patch', { status: 'paid', note: null }, stored);
    expect(messages(patched.issues)).toEqual([]);
    expect(patched.data).toEqual({ number: 'A-1', status: 'paid', amount: 10, seq: 1 });
  });

  it('replaces on PUT: absent fields go, defaults return, auto-assigned values stay', () => {
    const stored = { number: 'A-1', status: 'paid', amount: 10, seq: 7, note: 'x' };
    const replaced = prepareRecordData(invoice, 'replace', { number: 'A-1', seq: 7 }, stored);
    expect(messages(replaced.issues)).toEqual([]);
    expect(replaced.data).toEqual({ number: 'A-1', status: 'open', seq: 7 });
  });

  it('refuses changing an immutable field or an auto-assigned one', () => {
    const stored = { number: 'A-1', seq: 7 };
    const changed = prepareRecordData(invoice, 'patch', { number: 'B-2', seq: 8 }, stored);
    expect(messages(changed.issues)).toEqual([
      'data.seq: is assigned automatically and cannot be set',
      'data.number: is immutable and cannot change',
    ]);
  });

  it('accepts and reports unknown fields in auto-evolving collections, and anything in schemaless ones', () => {
    const evolving = schema([{ name: 'a', type: 'number' }], 'auto-evolving');
    const result = prepareRecordData(evolving, 'create', { a: 1, colour: 'red' });
    expect(messages(result.issues)).toEqual([]);
    expect(result.unknownFields).toEqual(['colour']);
    expect(messages(prepareRecordData(evolving, 'create', { a: 'x' }).issues)).toEqual(['data.a: must be a number']);

    const free = schema([{ name: 'a', type: 'number' }], 'schemaless');
    const anything = prepareRecordData(free, 'create', { a: 'not a number', b: [1] });
    expect(messages(anything.issues)).toEqual([]);
    expect(anything.unknownFields).toEqual([]);
  });

  it('keeps a field named __proto__ an ordinary field, never the prototype', () => {
    // JSON.parse (the body parser) makes __proto__ an own property, as an attacker would send it.
    const body = JSON.parse('{"number": "A-1", "__proto__": {"polluted": true}}') as unknown;
    const strict = prepareRecordData(invoice, 'create', body);
    expect(messages(strict.issues)).toEqual(['data.__proto__: is not a property of this object']);

    const free = schema([{ name: 'a', type: 'number' }], 'schemaless');
    for (const prepared of [
      prepareRecordData(free, 'create', body),
      prepareRecordData(
        free,
        'patch',
        body,
        JSON.parse('{"__proto__": {"old": 1}, "a": 1}') as Record<string, unknown>,
      ),
    ]) {
      expect(Object.getPrototypeOf(prepared.data)).toBe(Object.prototype);
      expect(Object.keys(prepared.data)).toContain('__proto__');
      expect(JSON.parse(JSON.stringify(prepared.data)).__proto__).toEqual({ polluted: true });
      expect((prepared.data as { polluted?: unknown }).polluted).toBeUndefined();
    }
  });

  it('refuses a body that is not an object', () => {
    expect(messages(prepareRecordData(invoice, 'create', [1]).issues)).toEqual(['data: must be an object']);
  });
});

describe('computeFields', () => {
  const props: PropertyDefinition[] = schema([
    { name: 'amount', type: 'number' },
    { name: 'total', type: 'number', expression: 'amount * 2' },
    { name: 'label', type: 'string' },
    { name: 'bad', type: 'number', expression: 'label', computedMode: 'virtual' },
    { name: 'due', type: 'datetime', expression: '$fromMillis(1767225600000)', computedMode: 'virtual' },
  ]).properties;

  it('evaluates persisted expressions against the record only', async () => {
    const data: Record<string, unknown> = { amount: 21 };
    const issues = new Issues();
    await computeFields(props, data, 'persisted', issues);
    expect(data).toEqual({ amount: 21, total: 42 });
    expect(issues.list).toEqual([]);
  });

  it('leaves a field absent when its inputs are, and reports a result of the wrong type', async () => {
    const data: Record<string, unknown> = { label: 'x' };
    const issues = new Issues();
    await computeFields(props, data, 'persisted', issues);
    expect(data).toEqual({ label: 'x' });
    await computeFields(props, data, 'virtual', issues);
    expect(data['due']).toBe('2026-01-01T00:00:00.000Z');
    expect(messages(issues)).toEqual(['data.bad: expression produced "x", not a number']);
  });
});

describe('normalizeDatetimes', () => {
  it('stores datetimes as UTC with milliseconds at any depth, leaving other values alone', async () => {
    const { normalizeDatetimes } = await import('./normalize.js');
    const { properties } = schema([
      { name: 'at', type: 'datetime' },
      { name: 'days', type: 'array', items: { type: 'datetime' } },
      { name: 'span', type: 'object', properties: [{ name: 'from', type: 'datetime' }] },
      { name: 'log', type: 'array', items: { type: 'object' }, itemSchema: [{ name: 'when', type: 'datetime' }] },
      { name: 'label', type: 'string' },
    ]);
    const data: Record<string, unknown> = {
      at: '2026-01-01T10:00:00+02:00',
      days: ['2026-03-01', 'not a date'],
      span: { from: '2026-01-01T00:00Z' },
      log: [{ when: '2026-01-01 12:00:00-0100' }],
      label: '2026-01-01',
    };
    normalizeDatetimes(properties, data);
    expect(data).toEqual({
      at: '2026-01-01T08:00:00.000Z',
      days: ['2026-03-01T00:00:00.000Z', 'not a date'],
      span: { from: '2026-01-01T00:00:00.000Z' },
      log: [{ when: '2026-01-01T13:00:00.000Z' }],
      label: '2026-01-01',
    });
  });
});
