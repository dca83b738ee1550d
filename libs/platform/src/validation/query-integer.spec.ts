import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { QueryInteger } from './page.query.js';
import { PageQuery } from './page.query.js';

class PageNumberQuery {
  @QueryInteger(1, 1000, 1)
  page?: number;
}

const problems = (query: Record<string, unknown>) =>
  validateSync(plainToInstance(PageNumberQuery, query)).flatMap((e) => Object.values(e.constraints ?? {}));

describe('integer query parameters', () => {
  it('take decimal digits, with a sign', () => {
    expect(plainToInstance(PageNumberQuery, { page: '42' }).page).toBe(42);
    expect(problems({ page: '42' })).toEqual([]);
    expect(problems({ page: '+7' })).toEqual([]);
    expect(problems({ page: '-1' })).toEqual(['page must be an integer from 1 to 1000']);
  });

  it('refuse what Number() would read as a number but is not written as one', () => {
    for (const text of ['0x10', '1e2', '0b11', ' 5', '5 ', '', '1.5', '1_000', 'Infinity']) {
      expect({ text, problems: problems({ page: text }) }).toEqual({
        text,
        problems: ['page must be an integer from 1 to 1000'],
      });
    }
    // A repeated parameter arrives as an array: refused as it is.
    expect(problems({ page: ['1', '2'] })).toEqual(['page must be an integer from 1 to 1000']);
  });

  it('apply to the shared limit and offset too', () => {
    const errors = validateSync(plainToInstance(PageQuery, { limit: '0x10', offset: '1e3' }));
    expect(errors.map((e) => e.property).sort()).toEqual(['limit', 'offset']);
    expect(plainToInstance(PageQuery, { limit: '16', offset: '1000' })).toMatchObject({ limit: 16, offset: 1000 });
  });
});
