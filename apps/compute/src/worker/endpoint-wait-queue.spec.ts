import { describe, expect, it } from '@jest/globals';
import { ManualClock } from '@strata/testing';
import { EndpointWaitQueue } from './endpoint-wait-queue.js';

const limits = { total: 6, perWorkspace: 4, waitMs: 1000 };
const any = () => true;

function queueOf(overrides: Partial<typeof limits> = {}) {
  const clock = new ManualClock(0);
  return { clock, queue: new EndpointWaitQueue<string>({ ...limits, ...overrides }, clock) };
}

describe('EndpointWaitQueue', () => {
  it('serves one workspace first come first', () => {
    const { queue } = queueOf();
    queue.add('a', 'a1');
    queue.add('a', 'a2');
    expect(queue.next(any)?.value).toBe('a1');
    expect(queue.next(any)?.value).toBe('a2');
    expect(queue.next(any)).toBeUndefined();
    expect(queue.size).toBe(0);
  });

  it('serves workspaces round-robin: a flood does not keep a later workspace behind it', () => {
    const { queue } = queueOf();
    for (const v of ['a1', 'a2', 'a3', 'a4']) queue.add('a', v);
    queue.add('b', 'b1');
    queue.add('c', 'c1');
    const order = Array.from({ length: 6 }, () => queue.next(any)?.value);
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'a3', 'a4']);
  });

  it('passes over a workspace that cannot start a call now, without losing its place in its own line', () => {
    const { queue } = queueOf();
    queue.add('a', 'a1');
    queue.add('b', 'b1');
    expect(queue.next((w) => w !== 'a')?.value).toBe('b1');
    expect(queue.next((w) => w !== 'a')).toBeUndefined();
    expect(queue.next(any)?.value).toBe('a1');
  });

  it('refuses past the total and past the per-workspace limit', () => {
    const { queue } = queueOf({ total: 3, perWorkspace: 2 });
    expect(queue.add('a', 'a1')).toBeDefined();
    expect(queue.add('a', 'a2')).toBeDefined();
    expect(queue.add('a', 'a3')).toBeUndefined();
    expect(queue.add('b', 'b1')).toBeDefined();
    expect(queue.add('c', 'c1')).toBeUndefined();
    expect(queue.size).toBe(3);
    expect(queue.sizeOf('a')).toBe(2);
  });

  it('queues nothing with no wait allowed', () => {
    const { queue } = queueOf({ waitMs: 0 });
    expect(queue.add('a', 'a1')).toBeUndefined();
  });

  it('gives back the calls whose wait is over, by the injected clock', () => {
    const { clock, queue } = queueOf();
    queue.add('a', 'a1');
    clock.advance(400);
    queue.add('b', 'b1');
    expect(queue.nextDeadline()).toBe(1000);
    expect(queue.expired()).toEqual([]);
    clock.advance(600);
    expect(queue.expired().map((w) => w.value)).toEqual(['a1']);
    expect(queue.size).toBe(1);
    expect(queue.nextDeadline()).toBe(1400);
    clock.advance(400);
    expect(queue.expired().map((w) => w.value)).toEqual(['b1']);
    expect(queue.nextDeadline()).toBeUndefined();
  });

  it('drops a call taken out (its caller went away) and serves the next', () => {
    const { queue } = queueOf();
    const gone = queue.add('a', 'a1')!;
    queue.add('a', 'a2');
    expect(queue.remove(gone)).toBe(true);
    expect(queue.remove(gone)).toBe(false);
    expect(queue.next(any)?.value).toBe('a2');
    expect(queue.size).toBe(0);
  });
});
