import { describe, expect, it } from '@jest/globals';
import {
  normaliseInterests,
  parseAddEventInterests,
  parseRecordEventSubject,
  parseReplaceEventInterests,
  routedRecordEventSubject,
} from './interests.js';

describe('record-event interests', () => {
  it('keeps one of each repeated interest', () => {
    expect(
      normaliseInterests([
        { workspaceSlug: 'acme', recordSlug: 'orders' },
        { workspaceSlug: 'acme', recordSlug: 'orders' },
        { workspaceSlug: 'acme', recordSlug: '*' },
      ]),
    ).toEqual([
      { workspaceSlug: 'acme', recordSlug: 'orders' },
      { workspaceSlug: 'acme', recordSlug: '*' },
    ]);
  });

  it.each([
    [{ workspaceSlug: 'Acme', recordSlug: 'x' }],
    [{ workspaceSlug: 'acme', recordSlug: 'a.b' }],
    [{ workspaceSlug: 'acme', recordSlug: 'a*' }],
    [{ workspaceSlug: 'acme', recordSlug: '>' }],
    [{ workspaceSlug: 'acme', recordSlug: '' }],
    [{ workspaceSlug: 'acme' }],
    ['acme'],
  ])('refuses %p', (interest) => {
    expect(() => normaliseInterests([interest])).toThrow();
  });

  it('refuses a bad consumer name, too many interests, and an interest outside the replaced workspace', () => {
    expect(() => parseAddEventInterests({ consumer: 'Web-hooks', interests: [] })).toThrow('invalid consumer');
    expect(() => parseAddEventInterests({ consumer: 'x'.repeat(41), interests: [] })).toThrow('invalid consumer');
    expect(() => parseAddEventInterests({ consumer: 'webhooks', interests: new Array(10_001).fill(null) })).toThrow(
      'at most',
    );
    expect(() =>
      parseReplaceEventInterests({
        consumer: 'webhooks',
        workspaceSlug: 'acme',
        interests: [{ workspaceSlug: 'other', recordSlug: '*' }],
      }),
    ).toThrow('outside workspace acme');
    expect(parseReplaceEventInterests({ consumer: 'webhooks', interests: [] })).toEqual({
      consumer: 'webhooks',
      interests: [],
    });
  });

  it('reads the workspace and collection of a record-event subject, and routes it', () => {
    expect(parseRecordEventSubject('p1', 'p1.records.acme.orders.record_created')).toEqual({
      workspaceSlug: 'acme',
      recordSlug: 'orders',
      event: 'record_created',
    });
    expect(parseRecordEventSubject('p1', 'p2.records.acme.orders.record_created')).toBeUndefined();
    expect(parseRecordEventSubject('p1', 'p1.records.acme.record_created')).toBeUndefined();
    expect(routedRecordEventSubject('p1', 'webhooks', 'p1.records.acme.orders.record_created')).toBe(
      'p1.routed.webhooks.acme.orders.record_created',
    );
  });
});
