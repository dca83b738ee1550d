import { describe, expect, it } from '@jest/globals';
import {
  afterLoss,
  codeRefusalMessage,
  codeRefusedAt,
  parseLostIsolates,
  probationAt,
  suspendedAt,
  suspensionMessage,
  type LostIsolates,
} from './lost-isolates.js';

const policy = { after: 2, windowMs: 600_000, suspendMs: 300_000 };
const at = (iso: string) => new Date(iso);

describe('afterLoss', () => {
  it('remembers a first loss without suspending', () => {
    expect(afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), policy, 'c1')).toEqual({
      losses: ['2026-11-26T10:00:00.000Z'],
      suspendedUntil: null,
      // Its code is refused for as long as a suspension would last.
      codes: { c1: '2026-11-26T10:05:00.000Z' },
    });
  });

  it('suspends from the loss that reaches the threshold within the window', () => {
    const first = afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), policy, 'c1');
    expect(afterLoss(first, at('2026-11-26T10:09:59.000Z'), policy, 'c2')).toEqual({
      losses: ['2026-11-26T10:00:00.000Z', '2026-11-26T10:09:59.000Z'],
      suspendedUntil: '2026-11-26T10:14:59.000Z',
      // The first code's refusal ended: it is forgotten.
      codes: { c2: '2026-11-26T10:14:59.000Z' },
    });
  });

  it('forgets losses older than the window', () => {
    const first = afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), policy, 'c1');
    expect(afterLoss(first, at('2026-11-26T10:10:00.000Z'), policy, 'c1')).toEqual({
      losses: ['2026-11-26T10:10:00.000Z'],
      suspendedUntil: null,
      codes: { c1: '2026-11-26T10:15:00.000Z' },
    });
  });

  it('starts the suspension again at a further loss, and never shortens one', () => {
    const suspended: LostIsolates = {
      losses: ['2026-11-26T10:00:00.000Z', '2026-11-26T10:01:00.000Z'],
      suspendedUntil: '2026-11-26T10:06:00.000Z',
      codes: {},
    };
    expect(afterLoss(suspended, at('2026-11-26T10:02:00.000Z'), policy, 'c1').suspendedUntil).toBe(
      '2026-11-26T10:07:00.000Z',
    );
    const longer = { ...suspended, suspendedUntil: '2026-11-26T12:00:00.000Z' };
    expect(afterLoss(longer, at('2026-11-26T10:02:00.000Z'), policy, 'c1').suspendedUntil).toBe(
      '2026-11-26T12:00:00.000Z',
    );
  });

  it('never suspends when the threshold is 0, and suspends at once when it is 1', () => {
    expect(
      afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), { ...policy, after: 0 }, 'c1').suspendedUntil,
    ).toBeNull();
    expect(afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), { ...policy, after: 1 }, 'c1').suspendedUntil).toBe(
      '2026-11-26T10:05:00.000Z',
    );
  });

  it('refuses each code that lost an isolate, each until its own loss plus the suspension', () => {
    const first = afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), { ...policy, after: 5 }, 'c1');
    const second = afterLoss(first, at('2026-11-26T10:01:00.000Z'), { ...policy, after: 5 }, 'c2');
    expect(second).toEqual({
      losses: ['2026-11-26T10:00:00.000Z', '2026-11-26T10:01:00.000Z'],
      suspendedUntil: null,
      codes: { c1: '2026-11-26T10:05:00.000Z', c2: '2026-11-26T10:06:00.000Z' },
    });
    // The same code again (it ran before the refusal reached a worker): its refusal starts again.
    expect(afterLoss(second, at('2026-11-26T10:02:00.000Z'), { ...policy, after: 5 }, 'c1').codes).toEqual({
      c2: '2026-11-26T10:06:00.000Z',
      c1: '2026-11-26T10:07:00.000Z',
    });
    // A policy that never suspends refuses no code either.
    expect(afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), { ...policy, after: 0 }, 'c1').codes).toEqual({});
  });

  it('keeps at most the last thousand losses', () => {
    let record: LostIsolates | undefined;
    const start = Date.parse('2026-11-26T10:00:00.000Z');
    for (let i = 0; i < 1005; i++) record = afterLoss(record, new Date(start + i), { ...policy, after: 0 }, 'c1');
    expect(record!.losses).toHaveLength(1000);
    expect(record!.losses[0]).toBe(new Date(start + 5).toISOString());
  });
});

describe('parseLostIsolates', () => {
  it('reads a stored record', () => {
    const record = {
      losses: ['2026-11-26T10:00:00.000Z'],
      suspendedUntil: '2026-11-26T10:05:00.000Z',
      codes: { c1: '2026-11-26T10:05:00.000Z' },
    };
    expect(parseLostIsolates(JSON.stringify(record))).toEqual(record);
    // A record written before codes were kept.
    expect(parseLostIsolates('{"losses": [], "suspendedUntil": null}')).toEqual({
      losses: [],
      suspendedUntil: null,
      codes: {},
    });
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

describe('codeRefusedAt', () => {
  const record: LostIsolates = { losses: [], suspendedUntil: null, codes: { c1: '2026-11-26T10:05:00.000Z' } };

  it('answers the end of a refusal still on, for that code only', () => {
    expect(codeRefusedAt(record, 'c1', at('2026-11-26T10:04:59.999Z'))).toEqual(at('2026-11-26T10:05:00.000Z'));
    expect(codeRefusedAt(record, 'c2', at('2026-11-26T10:00:00.000Z'))).toBeUndefined();
    expect(codeRefusedAt(record, 'c1', at('2026-11-26T10:05:00.000Z'))).toBeUndefined();
    expect(codeRefusedAt(undefined, 'c1', at('2026-11-26T10:00:00.000Z'))).toBeUndefined();
  });

  it('says which code, until when, and that other code runs', () => {
    expect(codeRefusalMessage(at('2026-11-26T10:05:00.000Z'), 'ab'.repeat(32))).toBe(
      'This code (functionCodeHash abababababab…) made the sandbox lose an isolate: its runs are refused until ' +
        "2026-11-26T10:05:00.000Z (memory grown past what its limit can stop). The workspace's other code runs as usual.",
    );
  });
});

describe('suspendedAt', () => {
  const record: LostIsolates = { losses: [], suspendedUntil: '2026-11-26T10:05:00.000Z', codes: {} };

  it('answers the end of a suspension still on', () => {
    expect(suspendedAt(record, at('2026-11-26T10:04:59.999Z'))).toEqual(at('2026-11-26T10:05:00.000Z'));
  });

  it('answers undefined once it passed, without one, or without a record', () => {
    expect(suspendedAt(record, at('2026-11-26T10:05:00.000Z'))).toBeUndefined();
    expect(
      suspendedAt({ losses: [], suspendedUntil: null, codes: {} }, at('2026-11-26T10:00:00.000Z')),
    ).toBeUndefined();
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

describe('probationAt', () => {
  it('holds from a loss until the window after the last one has passed', () => {
    const first = afterLoss(undefined, at('2026-11-26T10:00:00.000Z'), policy, 'c1');
    expect(probationAt(undefined, at('2026-11-26T10:00:00.000Z'), policy)).toBeUndefined();
    expect(probationAt(first, at('2026-11-26T10:09:59.999Z'), policy)).toEqual(at('2026-11-26T10:10:00.000Z'));
    expect(probationAt(first, at('2026-11-26T10:10:00.000Z'), policy)).toBeUndefined();
    const second = afterLoss(first, at('2026-11-26T10:05:00.000Z'), policy, 'c2');
    expect(probationAt(second, at('2026-11-26T10:12:00.000Z'), policy)).toEqual(at('2026-11-26T10:15:00.000Z'));
  });
});
