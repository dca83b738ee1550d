import { describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import fc from 'fast-check';
import { compileCondition, compileWhere, type TypedCondition } from './compile-where.js';
import { compileCount, compileSelect } from './compile-select.js';
import { Params } from './params.js';
import { OPERATORS, type FieldRef, type FieldType, type Operator } from './query.types.js';

const price: FieldRef = { kind: 'data', path: ['price'] };
const ALLOWED_LITERALS = ["'string'", "'number'", "'boolean'", "'{}'", "'null'", "'\\'"];
const compile = (condition: TypedCondition) => {
  const params = new Params();
  return { sql: compileCondition(condition, params), params: params.values };
};

describe('compileCondition', () => {
  it.each<[string, TypedCondition, string, unknown[]]>([
    [
      'typed equality on the JSON value',
      { field: price, op: 'eq', value: 42, type: 'number' },
      "COALESCE(r.data #> $1::text[], 'null'::jsonb) = $2::jsonb",
      [['price'], '42'],
    ],
    [
      'a JSON null equals null only, not an absent field',
      { field: price, op: 'eq', value: null, type: 'number' },
      "(r.data #> $1::text[]) = 'null'::jsonb",
      [['price']],
    ],
    [
      'ne holds where the field is absent',
      { field: price, op: 'ne', value: 42, type: 'number' },
      "NOT COALESCE(COALESCE(r.data #> $1::text[], 'null'::jsonb) = $2::jsonb, false)",
      [['price'], '42'],
    ],
    [
      'numbers compare as JSON numbers (by value), other JSON types never match',
      { field: price, op: 'gt', value: 9, type: 'number' },
      "(COALESCE(r.data #> $1::text[], 'null'::jsonb) > $2::jsonb AND jsonb_typeof(COALESCE(r.data #> $1::text[], 'null'::jsonb)) = 'number')",
      [['price'], '9'],
    ],
    [
      'datetimes compare as UTC text',
      { field: { kind: 'data', path: ['at'] }, op: 'lte', value: '2026-01-01T00:00:00.000Z', type: 'datetime' },
      "(COALESCE(r.data #> $1::text[], 'null'::jsonb) <= $2::jsonb AND jsonb_typeof(COALESCE(r.data #> $1::text[], 'null'::jsonb)) = 'string')",
      [['at'], '"2026-01-01T00:00:00.000Z"'],
    ],
    [
      'in binds one array',
      { field: price, op: 'in', value: [1, 2], type: 'number' },
      "COALESCE(r.data #> $1::text[], 'null'::jsonb) = ANY($2::jsonb[])",
      [['price'], ['1', '2']],
    ],
    [
      'contains escapes LIKE wildcards',
      { field: { kind: 'data', path: ['name'] }, op: 'contains', value: '50%_off', type: 'string' },
      "((r.data #>> $1::text[]) ILIKE $2 ESCAPE '\\' AND jsonb_typeof((r.data #> $1::text[])) = 'string')",
      [['name'], '%50\\%\\_off%'],
    ],
    [
      'hasAll is containment',
      { field: { kind: 'data', path: ['tags'] }, op: 'hasAll', value: ['a', 'b'], type: 'array' },
      '(r.data #> $1::text[]) @> $2::jsonb',
      [['tags'], '["a","b"]'],
    ],
    [
      'exists false is absence',
      { field: price, op: 'exists', value: false, type: 'number' },
      '(r.data #> $1::text[]) IS NULL',
      [['price']],
    ],
    [
      'schemaless fields compare as text',
      { field: price, op: 'gt', value: '9', type: 'text' },
      '(r.data #>> $1::text[]) > $2::text',
      [['price'], '9'],
    ],
    [
      'system columns use their own type',
      {
        field: { kind: 'system', column: 'createdAt' },
        op: 'gte',
        value: '2026-01-01T00:00:00.000Z',
        type: 'datetime',
      },
      'r.created_at >= $1::timestamptz',
      ['2026-01-01T00:00:00.000Z'],
    ],
  ])('%s', (_label, condition, sql, params) => {
    expect(compile(condition)).toEqual({ sql, params });
  });

  it('produces SQL that depends on the structure only: values and paths are always bound', () => {
    const types: FieldType[] = ['string', 'number', 'boolean', 'datetime', 'uuid', 'array', 'object', 'reference'];
    const anything = fc.oneof(
      fc.string(),
      fc.double(),
      fc.boolean(),
      fc.array(fc.string(), { minLength: 1, maxLength: 3 }),
    );
    const segment = fc.string({ minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(
        fc.constantFrom(...OPERATORS),
        fc.constantFrom<FieldType | 'text'>(...types, 'text'),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        anything,
        anything,
        (op: Operator, type, pathA, pathB, a, b) => {
          const one = compile({ field: { kind: 'data', path: pathA }, op, value: a, type });
          const two = compile({ field: { kind: 'data', path: pathB }, op, value: b, type });
          // Booleans pick between IS NULL and IS NOT NULL for exists; nothing else changes the text.
          // A JSON null is its own shape for eq and ne.
          const nullShape = (op === 'eq' || op === 'ne') && (a === null) !== (b === null);
          if (op !== 'exists' && !nullShape) expect(one.sql).toBe(two.sql);
          // The only literals in the SQL are the compiler's own.
          const literals = one.sql.match(/'[^']*'/g) ?? [];
          for (const literal of literals) expect(ALLOWED_LITERALS).toContain(literal);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('compileWhere', () => {
  it('nests combinators and treats unknown (NULL) as false under not', () => {
    const params = new Params();
    const sql = compileWhere(
      {
        or: [
          { condition: { field: price, op: 'gt', value: 1, type: 'number' } },
          { not: { and: [{ condition: { field: price, op: 'exists', value: true, type: 'number' } }] } },
        ],
      },
      params,
    );
    expect(sql).toMatch(/^\(\(.*\) OR \(NOT COALESCE\(.*, false\)\)\)$/);
    expect(sql).toContain('(NOT COALESCE((((r.data #> $3::text[]) IS NOT NULL)), false))');
    expect(compileWhere({ and: [] }, new Params())).toBe('TRUE');
    expect(compileWhere({ or: [] }, new Params())).toBe('FALSE');
  });
});

describe('compileSelect', () => {
  const base = { scope: issueWorkspaceScope('acme'), collectionId: '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11', limit: 20 };

  it('puts the workspace, the collection and live records first, whatever the conditions', () => {
    const { sql, params } = compileSelect({
      ...base,
      where: { or: [{ condition: { field: price, op: 'gt', value: 1, type: 'number' } }] },
      sort: [{ field: price, type: 'number', direction: 'desc' }],
    });
    expect(sql).toContain('WHERE r.workspace_slug = $1 AND r.collection_id = $2::uuid AND r.deleted_at IS NULL AND (');
    expect(sql).toContain("ORDER BY COALESCE(r.data #> $3::text[], 'null'::jsonb) DESC, r.id ASC");
    expect(params.slice(0, 2)).toEqual(['acme', base.collectionId]);
  });

  it('continues after a cursor with a keyset condition, not an offset', () => {
    const { sql, params } = compileSelect({
      ...base,
      sort: [
        { field: price, type: 'number', direction: 'desc' },
        { field: { kind: 'system', column: 'createdAt' }, type: 'datetime', direction: 'asc' },
      ],
      after: { keys: ['40', '2026-01-01 00:00:00+00'], id: '1b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11' },
    });
    expect(sql).not.toContain('OFFSET');
    expect(sql).toContain(
      "((COALESCE(r.data #> $3::text[], 'null'::jsonb) < $4::jsonb) OR (COALESCE(r.data #> $3::text[], 'null'::jsonb) = $4::jsonb AND r.created_at > $5::timestamptz) OR (COALESCE(r.data #> $3::text[], 'null'::jsonb) = $4::jsonb AND r.created_at = $5::timestamptz AND r.id > $6::uuid))",
    );
    expect(params).toContain('1b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11');
  });

  it('continues an all-ascending order with one row comparison, which an index range scan answers', () => {
    const { sql } = compileSelect({
      ...base,
      sort: [{ field: { kind: 'system', column: 'createdAt' }, type: 'datetime', direction: 'asc' }],
      after: { keys: ['2026-01-01 00:00:00+00'], id: '1b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11' },
    });
    expect(sql).toContain('((r.created_at, r.id) > ($3::timestamptz, $4::uuid))');
  });

  it('counts the same scope and conditions', () => {
    const { sql } = compileCount({
      ...base,
      where: { condition: { field: price, op: 'eq', value: 1, type: 'number' } },
    });
    expect(sql).toMatch(
      /^SELECT count\(\*\)::int AS n FROM data\.records r JOIN data\.collections c ON c\.id = r\.collection_id WHERE r\.workspace_slug = \$1 AND r\.collection_id = \$2::uuid AND r\.deleted_at IS NULL AND/,
    );
  });
});
