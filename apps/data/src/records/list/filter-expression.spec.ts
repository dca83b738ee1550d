import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FilterSyntaxError, parseFilter } from './filter-expression.js';

describe('parseFilter', () => {
  it.each([
    ['status:active', [{ key: 'status', op: 'eq', values: ['active'] }]],
    ['price:>100', [{ key: 'price', op: 'gt', values: ['100'] }]],
    ['price:>=1.5', [{ key: 'price', op: 'gte', values: ['1.5'] }]],
    ['price:<3', [{ key: 'price', op: 'lt', values: ['3'] }]],
    ['price:<=3', [{ key: 'price', op: 'lte', values: ['3'] }]],
    [
      'price:1.5..9',
      [
        { key: 'price', op: 'gte', values: ['1.5'] },
        { key: 'price', op: 'lte', values: ['9'] },
      ],
    ],
    [
      'at:2026-01-01..2026-12-31T23:59:59Z',
      [
        { key: 'at', op: 'gte', values: ['2026-01-01'] },
        { key: 'at', op: 'lte', values: ['2026-12-31T23:59:59Z'] },
      ],
    ],
    ['name:*ab*', [{ key: 'name', op: 'contains', values: ['ab'] }]],
    ['name:ab*', [{ key: 'name', op: 'startsWith', values: ['ab'] }]],
    ['name:*ab', [{ key: 'name', op: 'endsWith', values: ['ab'] }]],
    ['tier:[free,pro]', [{ key: 'tier', op: 'in', values: ['free', 'pro'] }]],
    ['tier:![free]', [{ key: 'tier', op: 'nin', values: ['free'] }]],
    ['tier:!free', [{ key: 'tier', op: 'ne', values: ['free'] }]],
    ['data.address.city:Oslo', [{ key: 'data.address.city', op: 'eq', values: ['Oslo'] }]],
    ['name:"a,b:c*[d]\\"e"', [{ key: 'name', op: 'eq', values: ['a,b:c*[d]"e'] }]],
    [
      'a:1,b:2',
      [
        { key: 'a', op: 'eq', values: ['1'] },
        { key: 'b', op: 'eq', values: ['2'] },
      ],
    ],
    ['url:http://x', [{ key: 'url', op: 'eq', values: ['http://x'] }]],
  ])('%s', (source, terms) => {
    expect(parseFilter(source)).toEqual(terms);
  });

  it.each([
    ['', 0, 'a field name'],
    ['price', 5, '":" after the field name'],
    ['price:', 6, 'a value'],
    ['a:1,', 4, 'a field name'],
    ['a:[1,2', 6, '"," or "]"'],
    ['a:"open', 7, 'a closing quote'],
    ['a:1]', 3, '"," or the end of the filter'],
    ['1a:1', 0, 'a field name'],
  ])('refuses %j at %i, expecting %s', (source, position, expected) => {
    try {
      parseFilter(source);
      throw new Error('parsed');
    } catch (err) {
      expect(err).toBeInstanceOf(FilterSyntaxError);
      expect(err).toMatchObject({ position, expected });
    }
  });

  it('never fails other than with a syntax error, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (source) => {
        try {
          const terms = parseFilter(source);
          return terms.every((t) => t.values.length > 0 && typeof t.key === 'string');
        } catch (err) {
          return err instanceof FilterSyntaxError && err.position >= 0 && err.position <= source.length;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('reads back what a well-formed term says', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/);
    const value = fc.string({ minLength: 1, maxLength: 20 });
    const quote = (v: string) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;
    fc.assert(
      fc.property(key, value, (k, v) => {
        expect(parseFilter(`${k}:${quote(v)}`)).toEqual([{ key: k, op: 'eq', values: [v] }]);
        expect(parseFilter(`${k}:[${quote(v)},${quote(v)}]`)).toEqual([{ key: k, op: 'in', values: [v, v] }]);
      }),
    );
  });
});
