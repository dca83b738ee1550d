import { describe, expect, it } from '@jest/globals';
import type { PropertyDefinition } from '@strata/contracts';
import { planCreation, planDeletion, type DeletionCandidate } from './bulk-plan.js';

const ref = (target: string, extra: Record<string, unknown> = {}) => ({
  name: `to_${target.replace(/-/g, '_')}`,
  type: 'reference',
  target,
  relationship: 'many-to-one',
  onDelete: 'restrict',
  ...extra,
});

describe('planCreation', () => {
  it('keeps the request order when nothing references a later item', () => {
    expect(
      planCreation([
        { recordSlug: 'a', properties: [] },
        { recordSlug: 'b', properties: [ref('a')] },
      ]),
    ).toEqual({ order: [0, 1], cycles: [] });
  });

  it('creates a referenced item first, whatever its place in the request', () => {
    const plan = planCreation([
      { recordSlug: 'posts', properties: [{ name: 'title', type: 'string' }, ref('authors')] },
      { recordSlug: 'comments', properties: [ref('posts'), ref('authors')] },
      { recordSlug: 'authors', properties: [ref('authors')] }, // itself: no dependency
    ]);
    expect(plan).toEqual({ order: [2, 0, 1], cycles: [] });
  });

  it('ignores references to existing collections and raw definitions of any shape', () => {
    const plan = planCreation([
      { recordSlug: 'a', properties: [ref('existing'), 'junk', null, { type: 'reference', target: 5 }] },
      { recordSlug: 'b', properties: 'not a list' },
    ]);
    expect(plan).toEqual({ order: [0, 1], cycles: [] });
  });

  it('names each reference that closes a cycle among the items, and still lists every item', () => {
    const plan = planCreation([
      { recordSlug: 'free', properties: [] },
      { recordSlug: 'a', properties: [ref('b')] },
      { recordSlug: 'b', properties: [{ name: 'x', type: 'string' }, ref('c')] },
      { recordSlug: 'c', properties: [ref('a')] },
      { recordSlug: 'hangs-on', properties: [ref('a')] },
    ]);
    expect(plan.order).toEqual([0, 1, 2, 3, 4]);
    expect(plan.cycles).toEqual([
      { index: 1, field: 'properties[0].target', message: 'would form a circular reference: a → b → c → a' },
      { index: 2, field: 'properties[1].target', message: 'would form a circular reference: b → c → a → b' },
      { index: 3, field: 'properties[0].target', message: 'would form a circular reference: c → a → b → c' },
    ]);
  });
});

const collection = (id: string, properties: unknown[] = []): DeletionCandidate => ({
  id,
  recordSlug: id,
  properties: properties as PropertyDefinition[],
});

describe('planDeletion', () => {
  it('deletes what nothing outside the set references', () => {
    const all = [collection('a'), collection('b', [ref('a')]), collection('c')];
    const plan = planDeletion(all, new Set(['a', 'b', 'c']));
    expect([...plan.going].sort()).toEqual(['a', 'b', 'c']);
    expect(plan.blocked.size).toBe(0);
  });

  it('keeps a collection referenced by one that stays, naming the reference', () => {
    const all = [collection('a'), collection('b', [ref('a', { targetField: 'name' })])];
    const plan = planDeletion(all, new Set(['a']));
    expect([...plan.going]).toEqual([]);
    expect(plan.blocked.get('a')).toEqual([{ collection: 'b', property: 'to_a', field: 'name' }]);
  });

  it('keeps, in turn, what a kept collection references', () => {
    // c references b references a; d (not deleted) references c: c stays, so b and a stay too.
    const all = [
      collection('a'),
      collection('b', [ref('a')]),
      collection('c', [ref('b')]),
      collection('d', [ref('c')]),
    ];
    const plan = planDeletion(all, new Set(['a', 'b', 'c']));
    expect([...plan.going]).toEqual([]);
    expect([...plan.blocked.keys()].sort()).toEqual(['a', 'b', 'c']);
  });

  it('never lets a collection block itself', () => {
    const plan = planDeletion([collection('tree', [ref('tree')])], new Set(['tree']));
    expect([...plan.going]).toEqual(['tree']);
  });
});
