import { describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import fc from 'fast-check';
import type { Collection, FieldError } from '@strata/contracts';
import { validateProperties } from '../schema/validate-properties.js';
import { parseCanonical } from './canonical.js';
import { compileSelect } from '../compiler/compile-select.js';
import { OPERATORS } from '../compiler/query.types.js';

let ids = 0;
const { properties } = validateProperties(
  [
    { name: 'name', type: 'string' },
    { name: 'price', type: 'number' },
    { name: 'active', type: 'boolean' },
    { name: 'at', type: 'datetime' },
    { name: 'tags', type: 'array', items: { type: 'string' } },
    { name: 'address', type: 'object', properties: [{ name: 'city', type: 'string' }] },
  ],
  { collectionSlug: 'things', collections: new Map(), newId: () => `p${++ids}` },
);
const collection = {
  id: '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11',
  workspaceSlug: 'acme',
  recordSlug: 'things',
  properties,
  schemaDiscoveryMode: 'strict',
  defaultSearchField: 'name',
} as unknown as Collection;

const ALLOWED_LITERALS = ["'string'", "'number'", "'boolean'", "'{}'", "'null'", "'\\'", "'simple'", "' '"];

describe('parseCanonical', () => {
  it('reads nested combinators and reports every problem with its path', () => {
    const problems: FieldError[] = [];
    const parts = parseCanonical(
      collection,
      {
        where: {
          'data.price': { gt: 5 },
          or: [{ 'data.address.city': { eq: 'Oslo' } }, { not: { 'data.active': { eq: true } } }],
          name: { eq: 'x' },
          'data.tags': { hasAny: [] },
        },
        sort: [{ field: 'updatedAt', direction: 'desc' }, { field: 'data.nope' }],
        select: { fields: ['data.name', 'id'] },
      },
      problems,
    );
    expect(problems).toEqual([
      { field: 'where.name', message: expect.stringContaining('neither a system column') },
      { field: 'where.data.tags.hasAny', message: 'hasAny expects a list of 1 to 1000 values' },
      { field: 'sort[1].field', message: '"data.nope" is not a property of this collection' },
    ]);
    expect(parts.sort).toHaveLength(1);
    expect(parts.select).toEqual(['data.name', 'id']);
  });

  it('never throws, and whatever it accepts compiles to SQL with only the compiler’s literals', () => {
    const fieldNames = fc.constantFrom(
      'data.name',
      'data.price',
      'data.active',
      'data.at',
      'data.tags',
      'data.address.city',
      'id',
      'createdAt',
      'version',
      'name',
      'data.x',
    );
    const ops = fc.constantFrom<string>(...OPERATORS, 'nope');
    const value = fc.oneof(
      fc.string(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
      fc.constant('2026-01-01T00:00:00Z'),
    );
    const condition = fc.tuple(fieldNames, ops, value).map(([f, op, v]) => ({ [f]: { [op]: v } }));
    const where: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        condition,
        fc.record({ and: fc.array(tie('node'), { maxLength: 3 }) }),
        fc.record({ or: fc.array(tie('node'), { maxLength: 3 }) }),
        fc.record({ not: tie('node') }),
        fc.jsonValue(),
      ),
    })).node;
    fc.assert(
      fc.property(where, fc.option(fc.jsonValue()), fc.option(fc.jsonValue()), (w, sort, text) => {
        const problems: FieldError[] = [];
        const parts = parseCanonical(
          collection,
          { where: w, sort: sort ?? undefined, text: text ?? undefined },
          problems,
        );
        if (problems.length) return;
        const { sql } = compileSelect({
          scope: issueWorkspaceScope('acme'),
          collectionId: collection.id,
          ...(parts.where ? { where: parts.where } : {}),
          ...(parts.text ? { text: parts.text } : {}),
          sort: parts.sort,
          limit: 20,
        });
        for (const literal of sql.match(/'[^']*'/g) ?? []) expect(ALLOWED_LITERALS).toContain(literal);
        expect(sql).toMatch(/WHERE r\.workspace_slug = \$1 AND r\.collection_id = \$2::uuid AND r\.deleted_at IS NULL/);
      }),
      { numRuns: 1000 },
    );
  });
});
