import { describe, expect, it } from '@jest/globals';
import type { RecordResponse } from '../records/record.types.js';
import { project } from './project.js';

const record = (data: Record<string, unknown>) => ({ id: 'r1', version: 3, data }) as unknown as RecordResponse;

describe('project', () => {
  it('keeps the id, the system columns and the data paths named', () => {
    expect(project(record({ a: { b: 1, c: 2 }, d: 3 }), ['version', 'data.a.b', 'data.d', 'data.none'])).toEqual({
      id: 'r1',
      version: 3,
      data: { a: { b: 1 }, d: 3 },
    });
  });

  it('copies stored fields named __proto__ and constructor as fields, and pollutes no prototype', () => {
    // As PostgreSQL's JSON comes back: __proto__ is an own property.
    const data = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "too"}}}');
    const out = project(record(data as Record<string, unknown>), [
      'data.__proto__.polluted',
      'data.constructor.prototype.polluted',
    ]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(out.data)).toBe(Object.prototype);
    expect(JSON.stringify(out.data)).toBe(
      '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"too"}}}',
    );
  });

  it('reads no inherited member for a path the record does not hold', () => {
    expect(project(record({}), ['data.constructor', 'data.toString.name', 'data.__proto__'])).toEqual({
      id: 'r1',
      data: {},
    });
  });
});
