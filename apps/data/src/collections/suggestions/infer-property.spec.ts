import { describe, expect, it } from '@jest/globals';
import { DEFAULT_SCHEMA_DISCOVERY_CONFIG } from '@strata/contracts';
import { validateProperties } from '../../schema/validate-properties.js';
import { inferObject, inferProperty } from './infer-property.js';

const config = DEFAULT_SCHEMA_DISCOVERY_CONFIG;

describe('inferProperty', () => {
  it.each([
    ['text', 'hello', { name: 'text', type: 'string' }],
    ['count', 3.5, { name: 'count', type: 'number' }],
    ['flag', false, { name: 'flag', type: 'boolean' }],
    ['when', '2026-11-20T10:00:00Z', { name: 'when', type: 'datetime' }],
    ['day', '2026-11-20', { name: 'day', type: 'datetime' }],
    ['notADate', '2026-13-45', { name: 'notADate', type: 'string' }],
    ['tags', ['a', 'b'], { name: 'tags', type: 'array', items: { type: 'string' } }],
    ['empty', [], { name: 'empty', type: 'array', items: { type: 'string' } }],
    [
      'lines',
      [{ sku: 'x' }, { qty: 2 }],
      {
        name: 'lines',
        type: 'array',
        items: { type: 'object' },
        itemSchema: [
          { name: 'sku', type: 'string' },
          { name: 'qty', type: 'number' },
        ],
      },
    ],
    [
      'address',
      { city: 'Oslo', geo: { lat: 1 } },
      {
        name: 'address',
        type: 'object',
        properties: [
          { name: 'city', type: 'string' },
          { name: 'geo', type: 'object', properties: [{ name: 'lat', type: 'number' }] },
        ],
      },
    ],
  ])('%s', (name, value, expected) => {
    expect(inferProperty(name, value, config)).toEqual(expected);
  });

  it.each([
    ['nothing from null', 'x', null],
    ['no arrays of arrays', 'grid', [[1]]],
    ['no invalid names', '1st', 'x'],
    ['no names with dots', 'a.b', 'x'],
  ])('%s', (_label, name, value) => {
    expect(inferProperty(name, value, config)).toBeUndefined();
  });

  it('stops describing objects at maxNestingDepth and keys at maxKeysPerRecord', () => {
    const shallow = { ...config, maxNestingDepth: 2, maxKeysPerRecord: 2 };
    expect(inferProperty('a', { b: { c: { d: 1 } } }, shallow)).toEqual({
      name: 'a',
      type: 'object',
      properties: [{ name: 'b', type: 'object', properties: [] }],
    });
    expect(inferObject({ x: 1, y: 2, z: 3 }, shallow).map((p) => p.name)).toEqual(['x', 'y']);
  });

  it('proposes definitions the collection validator accepts', () => {
    const proposed = inferObject(
      { a: 'x', b: 1, c: true, d: '2026-01-01', e: ['x'], f: [{ g: 1 }], h: { i: { j: 'k' } } },
      config,
    );
    const { issues } = validateProperties(proposed, {
      collectionSlug: 't',
      collections: new Map(),
      newId: () => Math.random().toString(36),
    });
    expect(issues.list).toEqual([]);
  });
});
