import { describe, expect, it } from '@jest/globals';
import { DEFAULT_FUNCTION_SORT, parseFunctionSort } from './function-list.js';

describe('parseFunctionSort', () => {
  it('defaults to newest first', () => {
    expect(parseFunctionSort(undefined)).toEqual({ sort: DEFAULT_FUNCTION_SORT });
    expect(parseFunctionSort('  ')).toEqual({ sort: DEFAULT_FUNCTION_SORT });
  });

  it('reads a JSON array of {field, direction}, direction in any case, asc by default', () => {
    expect(parseFunctionSort('[{"field":"name","direction":"DESC"},{"field":"createdAt"}]')).toEqual({
      sort: [
        { field: 'name', direction: 'desc' },
        { field: 'createdAt', direction: 'asc' },
      ],
    });
  });

  it('names every bad entry', () => {
    expect(parseFunctionSort('[{"field":"code"},{"field":"name","direction":"up"},7]')).toEqual({
      errors: [
        { field: 'sort[0].field', message: expect.stringContaining('must be one of') },
        { field: 'sort[1].direction', message: 'must be asc or desc' },
        { field: 'sort[2]', message: expect.any(String) },
      ],
    });
    expect(parseFunctionSort('[{"field":"name","extra":1},{"field":"toString"}]')).toEqual({
      errors: [
        { field: 'sort[0].extra', message: 'is not a sort option' },
        { field: 'sort[1].field', message: expect.stringContaining('must be one of') },
      ],
    });
    expect(parseFunctionSort('[{},{},{},{}]')).toEqual({
      errors: [{ field: 'sort', message: 'must have at most 3 entries' }],
    });
  });

  it('refuses what is not a JSON array, and repeated fields', () => {
    for (const text of ['name', '{}', '"name"', 'null']) {
      expect(parseFunctionSort(text)).toEqual({ errors: [{ field: 'sort', message: expect.any(String) }] });
    }
    expect(parseFunctionSort('[{"field":"name"},{"field":"name"}]')).toEqual({
      errors: [{ field: 'sort[1].field', message: 'name is sorted on already' }],
    });
  });
});
