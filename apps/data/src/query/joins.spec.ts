import { describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import type { Collection, FieldError } from '@strata/contracts';
import { resolveJoins } from './joins.js';

const collection = {
  id: 'c',
  workspaceSlug: 'w',
  recordSlug: 'books',
  properties: [],
  schemaDiscoveryMode: 'schemaless',
} as unknown as Collection;
/** Every case below is refused before any lookup: no collection is ever looked up. */
const noLookup = {
  find: () => Promise.reject(new Error('no lookup expected')),
};

async function problemsOf(
  definition: { joins?: unknown; join?: unknown },
  outer = false,
  maxJoins = 3,
): Promise<FieldError[]> {
  const problems: FieldError[] = [];
  await resolveJoins(
    issueWorkspaceScope('w'),
    noLookup,
    collection,
    definition,
    { maxJoins, outerJoinsEnabled: outer },
    problems,
  );
  return problems;
}

const clause = (extra: Record<string, unknown> = {}) => ({
  foreignSlug: 'a',
  localField: 'x',
  foreignField: 'id',
  alias: 'a',
  ...extra,
});

describe('resolveJoins', () => {
  it('refuses right and full joins unless the operator enabled them', async () => {
    expect(await problemsOf({ joins: [clause({ joinType: 'full' })] })).toEqual([
      { field: 'joins[0].joinType', message: 'full joins are disabled (DATA_QUERY_OUTER_JOINS_ENABLED)' },
    ]);
  });

  it('limits the number of joins', async () => {
    expect(await problemsOf({ joins: [clause(), clause(), clause()] }, false, 2)).toEqual([
      { field: 'joins', message: 'a query holds at most 2 joins (DATA_QUERY_MAX_JOINS)' },
    ]);
  });

  it('takes literals only in identifier slots, and known join fields and types', async () => {
    expect(await problemsOf({ joins: [clause({ localField: '{{f}}', joinType: 'cross', extra: 1 })] })).toEqual([
      { field: 'joins[0].localField', message: 'accepts literals only: placeholders are not allowed here' },
      { field: 'joins[0].extra', message: 'is not a join field' },
      { field: 'joins[0].joinType', message: 'must be one of: inner, left, right, full (got "cross")' },
    ]);
  });

  it('answers 422 for a legacy join with joinWhere', async () => {
    await expect(problemsOf({ join: { ...clause(), joinWhere: { 'data.x': { eq: 1 } } } })).rejects.toMatchObject({
      code: 'UNPROCESSABLE',
    });
  });
});
