import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { LANGUAGE_LIMITS, parseQuery, QuerySyntaxError, tooDeepParenthesis } from './parse.js';

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

  describe('FROM first (spec document 1), besides SQL order', () => {
    const sql = parseQuery(
      'SELECT status, COUNT(*) AS n FROM orders WHERE price > 1 GROUP BY status ORDER BY n DESC LIMIT 5 OFFSET 2',
    );
    const withoutPositions = (q: object) => JSON.parse(JSON.stringify(q, (k, v) => (k === 'at' ? 0 : v)));

    it.each([
      'FROM orders SELECT status, COUNT(*) AS n WHERE price > 1 GROUP BY status ORDER BY n DESC LIMIT 5 OFFSET 2',
      'FROM orders WHERE price > 1 SELECT status, COUNT(*) AS n GROUP BY status ORDER BY n DESC LIMIT 5 OFFSET 2',
      'FROM orders WHERE price > 1 GROUP BY status SELECT status, COUNT(*) AS n ORDER BY n DESC LIMIT 5 OFFSET 2',
      'FROM orders WHERE price > 1 GROUP BY status ORDER BY n DESC SELECT status, COUNT(*) AS n LIMIT 5 OFFSET 2',
      'from orders where price > 1 group by status order by n desc limit 5 offset 2 select status, count(*) as n',
    ])('%s reads as the SQL order', (source) => {
      expect(withoutPositions(parseQuery(source))).toEqual(withoutPositions(sql));
    });

    it("reads the spec's example", () => {
      expect(parseQuery('FROM orders GROUP BY data.status SELECT COUNT(*)')).toMatchObject({
        resource: 'orders',
        group: ['data.status'],
        select: [{ kind: 'aggregate', fn: 'count', field: null, alias: null, at: 40 }],
      });
    });

    it('reads FROM x WHERE ... ORDER BY ... LIMIT ... without a SELECT', () => {
      expect(parseQuery("FROM x WHERE a = 'b' ORDER BY a DESC LIMIT 3")).toMatchObject({
        select: null,
        where: { condition: expect.objectContaining({ field: 'a' }) },
        order: [{ field: 'a', direction: 'desc' }],
        limit: 3,
      });
    });

    it('refuses a second SELECT at its position', () => {
      const source = 'SELECT a FROM t WHERE a = 1 SELECT b';
      expect(() => parseQuery(source)).toThrow(QuerySyntaxError);
      try {
        parseQuery(source);
      } catch (err) {
        expect((err as QuerySyntaxError).position).toBe(source.lastIndexOf('SELECT'));
        expect((err as QuerySyntaxError).message).toMatch(/SELECT may appear only once/);
      }
    });
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

  describe('nesting', () => {
    const max = LANGUAGE_LIMITS.maxNesting;
    const nestingError = (source: string): QuerySyntaxError => {
      try {
        parseQuery(source);
      } catch (err) {
        if (err instanceof QuerySyntaxError) return err;
        throw err;
      }
      throw new Error('parsed');
    };

    it.each([
      ['parentheses', (n: number) => `FROM t WHERE ${'('.repeat(n)}x = 1${')'.repeat(n)}`],
      ['NOT', (n: number) => `FROM t WHERE ${'NOT '.repeat(n)}x = 1`],
      [
        'AND and OR groups',
        (n: number) =>
          `FROM t WHERE ${Array.from({ length: n }, (_, i) => `a = 1 ${i % 2 ? 'AND' : 'OR'} (`).join('')}x = 1${')'.repeat(n)}`,
      ],
      ['an INCLUDE condition', (n: number) => `FROM t INCLUDE r FROM u WHERE ${'NOT '.repeat(n)}x = 1`],
    ])('accepts %s up to the limit and refuses them beyond, without exhausting the stack', (_label, query) => {
      expect(() => parseQuery(query(max - 1))).not.toThrow();
      for (const depth of [max + 1, 2000, 5000]) {
        const source = query(depth);
        if (source.length > LANGUAGE_LIMITS.maxLength) continue;
        const err = nestingError(source);
        expect(err.message).toMatch(new RegExp(`^Conditions nest deeper than ${max} levels at line 1, column \\d+`));
        expect(err.position).toBeGreaterThan(12);
        expect(err.position).toBeLessThan(source.length);
      }
    });

    it('builds NOT chains as nested nots', () => {
      expect(parseQuery('FROM t WHERE NOT NOT x = 1').where).toEqual({
        not: { not: { condition: expect.objectContaining({ field: 'x', op: 'eq' }) } },
      });
    });

    it('does not count parentheses inside strings and quoted names', () => {
      const deep = '('.repeat(max + 5);
      expect(tooDeepParenthesis(`FROM t WHERE x = '${deep}' AND "${deep}" = 1`)).toBeUndefined();
      expect(tooDeepParenthesis(`FROM t WHERE x = 'it''s ${deep}'`)).toBeUndefined();
      expect(tooDeepParenthesis(`FROM t WHERE ${deep}`)).toBe(13 + max);
    });

    it('answers any run of parentheses and NOTs with a result or a QuerySyntaxError', () => {
      const piece = fc.constantFrom('(', ')', 'NOT ', 'x = 1', ' AND ', ' OR ', "'('", '"("');
      fc.assert(
        fc.property(fc.array(piece, { maxLength: 3000 }), (pieces) => {
          try {
            parseQuery(`FROM t WHERE ${pieces.join('')}`.slice(0, LANGUAGE_LIMITS.maxLength));
          } catch (err) {
            return err instanceof QuerySyntaxError;
          }
          return true;
        }),
        { numRuns: 300 },
      );
    });
  });
});
