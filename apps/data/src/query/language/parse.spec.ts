import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseQuery, QuerySyntaxError } from './parse.js';

describe('parseQuery', () => {
  it('reads a full query', () => {
    expect(
      parseQuery(`SELECT status, COUNT(*) AS n, SUM(price) FROM orders
        WHERE price >= 10 AND (status IN ('open', 'paid') OR NOT archived = true) AND note IS NOT NULL
        GROUP BY status ORDER BY n DESC LIMIT 5 OFFSET 10`),
    ).toEqual({
      select: [
        { kind: 'field', field: 'status' },
        { kind: 'aggregate', fn: 'count', field: null, alias: 'n', at: 15 },
        { kind: 'aggregate', fn: 'sum', field: 'price', alias: null, at: 30 },
      ],
      resource: 'orders',
      where: {
        and: [
          { condition: { field: 'price', op: 'gte', value: { literal: 10 }, at: expect.any(Number) } },
          {
            or: [
              {
                condition: {
                  field: 'status',
                  op: 'in',
                  value: { list: [{ literal: 'open' }, { literal: 'paid' }] },
                  at: expect.any(Number),
                },
              },
              { not: { condition: { field: 'archived', op: 'eq', value: { literal: true }, at: expect.any(Number) } } },
            ],
          },
          {
            and: [
              { condition: { field: 'note', op: 'exists', value: { literal: true }, at: expect.any(Number) } },
              { condition: { field: 'note', op: 'ne', value: { literal: null }, at: expect.any(Number) } },
            ],
          },
        ],
      },
      includes: [],
      group: ['status'],
      order: [{ field: 'n', direction: 'desc' }],
      limit: 5,
      offset: 10,
    });
  });

  it.each([
    [
      'FROM t WHERE a BETWEEN 1 AND 2',
      {
        and: [
          { condition: expect.objectContaining({ op: 'gte' }) },
          { condition: expect.objectContaining({ op: 'lte' }) },
        ],
      },
    ],
    [
      "from t where name contains 'it''s'",
      { condition: expect.objectContaining({ op: 'contains', value: { literal: "it's" } }) },
    ],
    [
      'FROM t WHERE name STARTS WITH :prefix',
      { condition: expect.objectContaining({ op: 'startsWith', value: { parameter: 'prefix', at: 30 } }) },
    ],
    ["FROM t WHERE tags HAS ANY ('a', 'b')", { condition: expect.objectContaining({ op: 'hasAny' }) }],
    ['FROM t WHERE x NOT IN (1, 2)', { condition: expect.objectContaining({ op: 'nin' }) }],
    ['FROM t WHERE x <> -1.5e3', { condition: expect.objectContaining({ op: 'ne', value: { literal: -1500 } }) }],
    [
      "FROM t WHERE SEARCH('red shoe') IN (name, description)",
      { search: { text: { literal: 'red shoe' }, fields: ['name', 'description'], fuzzy: false, at: 13 } },
    ],
    ["FROM t WHERE SEARCH FUZZY('shoe') IN (name)", { search: expect.objectContaining({ fuzzy: true }) }],
    ["FROM t WHERE data.address.city = 'Oslo'", { condition: expect.objectContaining({ field: 'data.address.city' }) }],
    ['FROM "my collection" WHERE "from" = 1', { condition: expect.objectContaining({ field: 'from' }) }],
  ])('%s', (source, where) => {
    expect(parseQuery(source).where).toEqual(where);
  });

  it('reads INCLUDE clauses', () => {
    expect(parseQuery("FROM books INCLUDE author FROM authors WHERE country = 'NO' LIMIT 3")).toMatchObject({
      resource: 'books',
      includes: [
        {
          relation: 'author',
          resource: 'authors',
          where: { condition: expect.objectContaining({ field: 'country' }) },
        },
      ],
      limit: 3,
    });
  });

  it.each([
    ['WHERE x = 1', 0, 'from'],
    ['FROM t WHERE', 12, 'whitespace'],
    ['FROM t WHERE x = ', 17, 'string'],
    ["FROM t WHERE x = 'open", 17, 'string'],
    ['FROM t LIMIT ten', 13, 'integer'],
    ['FROM t WHERE (x = 1', 19, ')'],
  ])('reports %j at position %i', (source, position, expectedSomething) => {
    try {
      parseQuery(source);
      throw new Error('parsed');
    } catch (err) {
      expect(err).toBeInstanceOf(QuerySyntaxError);
      const e = err as QuerySyntaxError;
      expect(e.position).toBe(position);
      expect(e.message).toMatch(/^Syntax error at line 1, column \d+ \(position \d+\)/);
      expect(JSON.stringify(e.expected) + e.message).toContain(expectedSomething.replace(/whitespace/, ''));
    }
  });

  it('never fails other than with a syntax error, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (tail) => {
        try {
          parseQuery(`FROM t WHERE ${tail}`);
        } catch (err) {
          return err instanceof QuerySyntaxError;
        }
        return true;
      }),
      { numRuns: 2000 },
    );
  });
});
