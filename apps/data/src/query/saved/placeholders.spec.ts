import { describe, expect, it } from '@jest/globals';
import { fitsType, scanPlaceholders, substitute } from './placeholders.js';

describe('scanPlaceholders', () => {
  it('finds ${var} and the deprecated {{var}}, refusing them in keys and inside longer strings', () => {
    const scan = scanPlaceholders({
      where: {
        'data.price': { gt: '${min}' },
        'data.name': { in: ['{{ name }}', 'x'] },
        'data.note': { eq: 'hi ${who}' },
      },
      '${field}': 1,
    });
    expect([...scan.names].sort()).toEqual(['min', 'name']);
    expect(scan.legacy).toBe(true);
    expect(scan.problems).toEqual([
      { field: 'query.where.data.note.eq', message: 'a placeholder must be the whole value (${name})' },
      { field: 'query.${field}', message: 'field names and operators are literals: placeholders are not allowed here' },
    ]);
  });
});

describe('substitute', () => {
  const where = {
    'data.price': { gt: '${min}' },
    'data.name': { in: ['${a}', '${b}'] },
    or: [{ 'data.x': { eq: '${x}' } }, { 'data.y': { eq: 1 } }],
  };

  it('puts values in place, keeping their JSON types', () => {
    expect(
      substitute(
        where,
        new Map<string, unknown>([
          ['min', 5],
          ['a', 'p'],
          ['b', 'q'],
          ['x', true],
        ]),
      ),
    ).toEqual({
      'data.price': { gt: 5 },
      'data.name': { in: ['p', 'q'] },
      or: [{ 'data.x': { eq: true } }, { 'data.y': { eq: 1 } }],
    });
  });

  it('drops the condition of a variable without a value, and the list item it is', () => {
    expect(substitute(where, new Map<string, unknown>([['a', 'p']]))).toEqual({
      'data.name': { in: ['p'] },
      or: [{ 'data.y': { eq: 1 } }],
    });
  });
});

describe('fitsType', () => {
  it.each([
    ['number', 10, true],
    ['number', '10', false],
    ['boolean', 'true', false],
    ['uuid', '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11', true],
    ['uuid', 'abc', false],
    ['datetime', '2026-01-01', true],
    ['datetime', 1767225600000, false],
    ['string', 5, false],
  ] as const)('%s %j → %s', (type, value, fits) => {
    expect(fitsType(type, value)).toBe(fits);
  });
});
