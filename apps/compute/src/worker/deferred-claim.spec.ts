import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { DeferredClaim } from './deferred-claim.js';

/** A started claim whose statement answers what `answers` holds next (true, false, or an Error). */
function claimWith(answers: (boolean | Error)[], afterMs = 50, started = true) {
  const taken: string[] = [];
  let claimed = 0;
  let lost = 0;
  const claim = new DeferredClaim({
    take: () => {
      taken.push('take');
      const answer = answers.shift() ?? true;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
    afterMs,
    onClaimed: () => claimed++,
    onLost: () => lost++,
  });
  if (started) claim.start();
  return { claim, taken, claimedCount: () => claimed, lostCount: () => lost };
}

describe('DeferredClaim', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('claims nothing for a run that ends before its window: the outcome carries the claim', async () => {
    const { claim, taken, claimedCount } = claimWith([]);
    jest.advanceTimersByTime(49);
    expect(await claim.end()).toBe('unclaimed');
    jest.advanceTimersByTime(1000);
    expect(taken).toHaveLength(0);
    expect(claimedCount()).toBe(0);
    // After its end a claim is never made.
    await expect(claim.claim()).resolves.toBe(false);
    expect(taken).toHaveLength(0);
  });

  it('claims nothing while the run waits for an isolate: its window starts with the run', async () => {
    const { claim, taken } = claimWith([true], 50, false);
    jest.advanceTimersByTime(10_000);
    expect(taken).toHaveLength(0);
    claim.start();
    claim.start(); // once
    jest.advanceTimersByTime(49);
    expect(taken).toHaveLength(0);
    jest.advanceTimersByTime(1);
    expect(taken).toHaveLength(1);
    expect(await claim.end()).toBe('claimed');
  });

  it('claims once the run has run for the window', async () => {
    const { claim, taken, claimedCount } = claimWith([true]);
    jest.advanceTimersByTime(49);
    expect(taken).toHaveLength(0);
    jest.advanceTimersByTime(1);
    expect(taken).toHaveLength(1);
    expect(await claim.end()).toBe('claimed');
    expect(claimedCount()).toBe(1);
  });

  it('tries a timed claim whose statement failed again after as long, until it holds', async () => {
    const { claim, taken, claimedCount } = claimWith([new Error('connection lost'), true]);
    await jest.advanceTimersByTimeAsync(50);
    expect(taken).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(50);
    expect(taken).toHaveLength(2);
    expect(claimedCount()).toBe(1);
    expect(await claim.end()).toBe('claimed');
  });

  it('claims at the first platform call, once, however many calls follow', async () => {
    const { claim, taken, claimedCount } = claimWith([true]);
    await Promise.all([claim.required(), claim.required()]);
    await claim.required();
    jest.advanceTimersByTime(1000);
    expect(taken).toHaveLength(1);
    expect(claimedCount()).toBe(1);
    expect(await claim.end()).toBe('claimed');
  });

  it('refuses every platform call of a run that is not queued any more, stops it, and ends lost', async () => {
    const { claim, taken, claimedCount, lostCount } = claimWith([false]);
    await expect(claim.required()).rejects.toThrow('cancelled or is run by another worker');
    await expect(claim.required()).rejects.toThrow('cancelled or is run by another worker');
    expect(taken).toHaveLength(1);
    expect(claimedCount()).toBe(0);
    // Told once: the run is stopped where it is.
    expect(lostCount()).toBe(1);
    expect(await claim.end()).toBe('lost');
  });

  it('tries a claim whose statement failed again at the next call, and ends unclaimed while it fails', async () => {
    const { claim, taken } = claimWith([new Error('connection lost'), new Error('connection lost'), true]);
    await expect(claim.required()).rejects.toThrow('connection lost');
    await expect(claim.required()).rejects.toThrow('connection lost');
    expect(await claim.end()).toBe('unclaimed');
    expect(taken).toHaveLength(2);

    const again = claimWith([new Error('connection lost'), true]);
    await expect(again.claim.required()).rejects.toThrow('connection lost');
    await again.claim.required();
    expect(await again.claim.end()).toBe('claimed');
  });
});
