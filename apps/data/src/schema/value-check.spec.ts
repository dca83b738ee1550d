import { describe, expect, it } from '@jest/globals';
import type { PropertyDefinition } from '@strata/contracts';
import { parseIsoDatetime } from './datetime.js';
import { Issues } from './issues.js';
import { checkObject, checkValue, isMultipleOf } from './value-check.js';
import { validateProperties } from './validate-properties.js';

let ids = 0;

/** Builds normalised definitions through the validator itself, so tests use what the API stores. */
function define(raw: unknown[]): PropertyDefinition[] {
  const { properties, issues } = validateProperties(raw, {
    collectionSlug: 'things',
    collections: new Map(),
    newId: () => `id-${++ids}`,
  });
  expect(issues.list).toEqual([]);
  return properties;
}

function problems(raw: unknown[], data: unknown, strict = true): string[] {
  const issues = new Issues();
  checkObject(define(raw), data, 'data', issues, { strictProperties: strict });
  return issues.list.map((i) => `${i.field}: ${i.message}`);
}

const CASES: [string, unknown[], unknown, string[]][] = [
  [
    'a property named like an inherited method is present only as an own field',
    [
      { name: 'toString', type: 'string', required: true },
      { name: 'valueOf', type: 'number' },
      { name: 'constructor', type: 'string' },
    ],
    {},
    ['data.toString: is required'],
  ],
  [
    'a property named like an inherited method checks its own value',
    [
      { name: 'toString', type: 'string' },
      { name: 'constructor', type: 'number' },
    ],
    { toString: 'text', constructor: 'nine' },
    ['data.constructor: must be a number'],
  ],
  ['valid string', [{ name: 's', type: 'string', minLength: 2 }], { s: 'ab' }, []],
  [
    'string too short, counted in characters',
    [{ name: 's', type: 'string', minLength: 3 }],
    { s: '😀😀' },
    ['data.s: must be at least 3 characters long'],
  ],
  [
    'string pattern',
    [{ name: 's', type: 'string', pattern: '^[a-z]+$' }],
    { s: 'Ab' },
    ['data.s: must match the pattern ^[a-z]+$'],
  ],
  ['string not', [{ name: 's', type: 'string', not: ['root'] }], { s: 'root' }, ['data.s: must not be "root"']],
  ['string enum', [{ name: 's', type: 'string', enum: ['a'] }], { s: 'b' }, ['data.s: must be one of ["a"]']],
  ['wrong type', [{ name: 's', type: 'string' }], { s: 1 }, ['data.s: must be a string']],
  ['required missing', [{ name: 's', type: 'string', required: true }], {}, ['data.s: is required']],
  ['null on a non-nullable', [{ name: 's', type: 'string' }], { s: null }, ['data.s: must not be null']],
  ['null on a nullable', [{ name: 's', type: 'string', nullable: true }], { s: null }, []],
  [
    'unknown field, strict',
    [{ name: 's', type: 'string' }],
    { s: 'x', extra: 1 },
    ['data.extra: is not a property of this object'],
  ],
  ['unknown field, not strict', [{ name: 's', type: 'string' }], { s: 'x', extra: 1 }, []],
  [
    'number bounds',
    [{ name: 'n', type: 'number', minimum: 0, maximum: 10 }],
    { n: 11 },
    ['data.n: must be at most 10'],
  ],
  [
    'exclusive minimum',
    [{ name: 'n', type: 'number', minimum: 0, exclusiveMinimum: true }],
    { n: 0 },
    ['data.n: must be greater than 0'],
  ],
  [
    'exclusive maximum',
    [{ name: 'n', type: 'number', maximum: 5, exclusiveMaximum: true }],
    { n: 5 },
    ['data.n: must be less than 5'],
  ],
  ['multipleOf', [{ name: 'n', type: 'number', multipleOf: 0.5 }], { n: 1.25 }, ['data.n: must be a multiple of 0.5']],
  ['number as a string', [{ name: 'n', type: 'number' }], { n: '3' }, ['data.n: must be a number']],
  ['boolean', [{ name: 'b', type: 'boolean' }], { b: 'true' }, ['data.b: must be a boolean']],
  [
    'datetime format',
    [{ name: 'd', type: 'datetime' }],
    { d: '2026-02-30' },
    ['data.d: must be an ISO 8601 date-time'],
  ],
  [
    'datetime bound',
    [{ name: 'd', type: 'datetime', earliestDate: '2026-01-01' }],
    { d: '2025-12-31T23:59:59Z' },
    ['data.d: must be on or after 2026-01-01'],
  ],
  [
    'datetime exclusive latest',
    [{ name: 'd', type: 'datetime', latestDate: '2026-01-01T00:00:00Z', exclusiveLatest: true }],
    { d: '2026-01-01T01:00:00+01:00' },
    ['data.d: must be before 2026-01-01T00:00:00Z'],
  ],
  [
    'array items and size',
    [{ name: 'a', type: 'array', items: { type: 'number', minimum: 0 }, maxItems: 2 }],
    { a: [1, -1, 2] },
    ['data.a: must have at most 2 items', 'data.a[1]: must be at least 0'],
  ],
  [
    'array uniqueItems, key order ignored',
    [
      {
        name: 'a',
        type: 'array',
        items: { type: 'object' },
        itemSchema: [
          { name: 'x', type: 'number' },
          { name: 'y', type: 'number' },
        ],
        uniqueItems: true,
      },
    ],
    {
      a: [
        { x: 1, y: 2 },
        { y: 2, x: 1 },
      ],
    },
    ['data.a[1]: duplicates item 0: items must be unique'],
  ],
  [
    'array of objects, strict by default',
    [
      {
        name: 'a',
        type: 'array',
        items: { type: 'object' },
        itemSchema: [{ name: 'x', type: 'number', required: true }],
      },
    ],
    { a: [{ x: 1 }, { y: 2 }] },
    ['data.a[1].x: is required', 'data.a[1].y: is not a property of this object'],
  ],
  [
    'array minItems',
    [{ name: 'a', type: 'array', items: { type: 'string' }, minItems: 1 }],
    { a: [] },
    ['data.a: must have at least 1 items'],
  ],
  [
    'nested object',
    [
      {
        name: 'o',
        type: 'object',
        properties: [{ name: 'n', type: 'number' }],
        requiredProperties: ['n'],
        strictProperties: true,
      },
    ],
    { o: { m: 1 } },
    ['data.o.n: is required', 'data.o.m: is not a property of this object'],
  ],
  ['object not an object', [{ name: 'o', type: 'object' }], { o: [1] }, ['data.o: must be an object']],
  [
    'reference id',
    [{ name: 'r', type: 'reference', target: 'things', relationship: 'many-to-one', onDelete: 'restrict' }],
    { r: 'abc' },
    ['data.r: must be a record id (UUID)'],
  ],
  [
    'many-to-many ids',
    [{ name: 'r', type: 'reference', target: 'things', relationship: 'many-to-many', onDelete: 'cascade' }],
    { r: ['0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11', 'x'] },
    ['data.r[1]: must be a record id (UUID)'],
  ],
  [
    'every error at once',
    [
      { name: 'a', type: 'string', required: true },
      { name: 'b', type: 'number', maximum: 1 },
      { name: 'c', type: 'boolean' },
    ],
    { b: 2, c: 0 },
    ['data.a: is required', 'data.b: must be at most 1', 'data.c: must be a boolean'],
  ],
];

describe('checkObject / checkValue', () => {
  it.each(CASES)('%s', (_name, raw, data, expected) => {
    expect(problems(raw, data, _name !== 'unknown field, not strict')).toEqual(expected);
  });

  it('refuses a non-object record body', () => {
    const issues = new Issues();
    checkObject([], 'text', 'data', issues, { strictProperties: false });
    expect(issues.list).toEqual([{ field: 'data', message: 'must be an object' }]);
  });

  it('checks a single value at the path it is given', () => {
    const issues = new Issues();
    checkValue(define([{ name: 'n', type: 'number', maximum: 3 }])[0]!, 4, 'default', issues);
    expect(issues.list).toEqual([{ field: 'default', message: 'must be at most 3' }]);
  });
});

describe('parseIsoDatetime', () => {
  it.each([
    ['2026-01-01', Date.UTC(2026, 0, 1)],
    ['2026-01-01T10:20Z', Date.UTC(2026, 0, 1, 10, 20)],
    ['2026-01-01T10:20:30.123+02:00', Date.UTC(2026, 0, 1, 8, 20, 30, 123)],
    ['2026-01-01T10:20:30+0200', Date.UTC(2026, 0, 1, 8, 20, 30)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
  ])('reads %s', (text, ms) => expect(parseIsoDatetime(text)).toBe(ms));

  it.each(['2026-02-29', '2026-1-1', '01/02/2026', '2026-01-01T24:00', 'now', '2026-01-01T10:61Z'])(
    'refuses %s',
    (text) => expect(parseIsoDatetime(text)).toBeUndefined(),
  );
});

describe('isMultipleOf', () => {
  it('tolerates binary floating point', () => {
    expect(isMultipleOf(0.3, 0.1)).toBe(true);
    expect(isMultipleOf(19.99, 0.01)).toBe(true);
    expect(isMultipleOf(0.35, 0.1)).toBe(false);
  });
});
