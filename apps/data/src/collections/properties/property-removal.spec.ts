import { describe, expect, it } from '@jest/globals';
import type { PropertyDefinition } from '@strata/contracts';
import { relaxed, removalProblems } from './property-removal.js';

const properties = [
  { name: 'name', type: 'string', required: true },
  { name: 'code', type: 'string', immutable: true },
  { name: 'bio', type: 'string' },
  { name: 'parent', type: 'reference', target: 'people', targetField: 'id', displayField: 'nick' },
  { name: 'nick', type: 'string' },
] as unknown as PropertyDefinition[];

describe('removalProblems', () => {
  const subject = { recordSlug: 'people', properties, defaultSearchField: 'bio' };

  it('finds nothing for removable properties', () => {
    expect(removalProblems({ ...subject, defaultSearchField: undefined }, ['name', 'bio'], [])).toEqual({
      unknown: [],
      conflicts: [],
    });
  });

  it('names unknown names (400) apart from conflicts (409), by their place in the request', () => {
    const problems = removalProblems(
      subject,
      ['ghost', 'code', 'bio', 'name', 'nick'],
      [
        { collection: 'posts', property: 'author', field: 'name' },
        { collection: 'posts', property: 'author', field: 'id' },
      ],
    );
    expect(problems.unknown).toEqual([{ field: 'names[0]', message: "the collection has no property 'ghost'" }]);
    expect(problems.conflicts).toEqual([
      { field: 'names[1]', message: "'code' is immutable and cannot be removed" },
      { field: 'names[2]', message: "'bio' is the collection's defaultSearchField" },
      { field: 'names[3]', message: "'name' is named by the reference posts.author (targetField or displayField)" },
      { field: 'names[4]', message: "'nick' is named by the reference people.parent (targetField or displayField)" },
    ]);
  });

  it('lets a self-reference go together with the field it names', () => {
    expect(removalProblems({ ...subject, defaultSearchField: undefined }, ['nick', 'parent'], []).conflicts).toEqual(
      [],
    );
  });
});

describe('relaxed', () => {
  it('makes only the named required properties optional', () => {
    const out = relaxed(properties, new Set(['name', 'bio']));
    expect(out[0]).toEqual({ name: 'name', type: 'string', required: false });
    expect(out[2]).toBe(properties[2]);
    expect(out[1]).toBe(properties[1]);
  });
});
