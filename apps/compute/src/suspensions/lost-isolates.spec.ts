import { describe, expect, it } from '@jest/globals';
import { afterLoss, parseLostIsolates, suspendedAt, suspensionMessage, type LostIsolates } from './lost-isolates.js';

const policy = { after: 2, windowMs: 600_000, suspendMs: 300_000 };
const at = (iso: string) => new Date(iso);

describe('afterLoss', () => {
  it('remembers a first loss without suspending', () => {
    expect(afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), policy)).toEqual({
      losses: ['2026-11-26T10:00:00.000Z'],
      suspendedUntil: null,
    });
  });

  it('suspends from the loss that reaches the threshold within the window', () => {
    const first = afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), policy);
    expect(afterLoss(first, at('2026-11-26T10:09:59.000Z'), policy)).toEqual({
      losses: ['2026-11-26T10:00:00.000Z', '2026-11-26T10:09:59.000Z'],
      suspendedUntil: '2026-11-26T10:14:59.000Z',
    });
  });

  it('forgets losses older than the window', () => {
    const first = afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), policy);
    expect(afterLoss(first, at('2026-11-26T10:10:00.000Z'), policy)).toEqual({
      losses: ['2026-11-26T10:10:00.000Z'],
      suspendedUntil: null,
    });
  });

  it('starts the suspension again at a further loss, and never shortens one', () => {
    const suspended: LostIsolates = {
      losses: ['2026-11-26T10:00:00.000Z', '2026-11-26T10:01:00.000Z'],
      suspendedUntil: '2026-11-26T10:06:00.000Z',
    };
    expect(afterLoss(suspended, at('2026-11-26T10:02:00.000Z'), policy).suspendedUntil).toBe(
      '2026-11-26T10:07:00.000Z',
    );
    const longer = { ...suspended, suspendedUntil: '2026-11-26T12:00:00.000Z' };
    expect(afterLoss(longer, at('2026-11-26T10:02:00.000Z'), policy).suspendedUntil).toBe('2026-11-26T12:00:00.000Z');
  });

  it('never suspends when the threshold is 0, and suspends at once when it is 1', () => {
    expect(afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), { ...policy, after: 0 }).suspendedUntil).toBeNull();
    expect(afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), { ...policy, after: 1 }).suspendedUntil).toBe(
      '2026-11-26T10:05:00.000Z',
    );
  });

  it('keeps at most the last thousand losses', () => {
    let record: LostIsolates | undefined;
    const start = Date.parse('2026-11-26T10:00:00.000Z');
    for (let i = 0; i < 1005; i++) record = afterLoss(record, new Date(start + i), { ...policy, after: 0 });
    expect(record!.losses).toHaveLength(1000);
    expect(record!.losses[0]).toBe(new Date(start + 5).toISOString());
  });
});

describe('parseLostIsolates', () => {
  it('reads a stored record', () => {
    const record = { losses: ['2026-11-26T10:00:00.000Z'], suspendedUntil: '2026-11-26T10:05:00.000Z' };
    expect(parseLostIsolates(JSON.stringify(record))).toEqual(record);
  });

  it.each([
    '',
    'null',
    '[]',
    '{"losses": 1, "suspendedUntil": null}',
    '{"losses": [1], "suspendedUntil": null}',
    '{"losses": [], "suspendedUntil": 5}',
  ])('refuses %j', (text) => {
    expect(parseLostIsolates(text)).toBeUndefined();
  });
});

describe('suspendedAt', () => {
  const record: LostIsolates = { losses: [], suspendedUntil: '2026-11-26T10:05:00.000Z' };

  it('answers the end of a suspension still on', () => {
    expect(suspendedAt(record, at('2026-11-26T10:04:59.999Z'))).toEqual(at('2026-11-26T10:05:00.000Z'));
  });

  it('answers undefined once it passed, without one, or without a record', () => {
    expect(suspendedAt(record, at('2026-11-26T10:05:00.000Z'))).toBeUndefined();
    expect(suspendedAt({ losses: [], suspendedUntil: null }, at('2026-11-26T10:00:00.000Z'))).toBeUndefined();
    expect(suspendedAt(undefined, at('2026-11-26T10:00:00.000Z'))).toBeUndefined();
  });
});

describe('suspensionMessage', () => {
  it('says until when, and why', () => {
    expect(suspensionMessage(at('2026-11-26T10:05:00.000Z'), policy)).toBe(
      'Function runs of this workspace are suspended until 2026-11-26T10:05:00.000Z: its runs made the sandbox ' +
        'lose 2 isolates within 10 minutes (memory grown past what its limit can stop).',
    );
    expect(suspensionMessage(at('2026-11-26T10:05:00.000Z'), { after: 1, windowMs: 60_000, suspendMs: 1 })).toContain(
      'lose 1 isolate within 1 minute (',
    );
  });
});
