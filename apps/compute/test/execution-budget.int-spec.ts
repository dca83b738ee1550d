import { afterAll, describe, expect, it } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { issueWorkspaceScope } from '@strata/db';
import { NatsConnectionHolder, NatsKvRateLimitStore } from '@strata/platform';
import { ManualClock } from '@strata/testing';
import { ExecutionBudget, reservationSize } from '../src/runs/execution-budget.js';
import { computeTestConfig } from './support/compute-config.js';

describe('ExecutionBudget against a real NATS server', () => {
  const config = computeTestConfig({
    RATE_LIMIT_EXECUTE_PER_MINUTE: '100',
    RATE_LIMIT_WINDOW_MS: '60000',
  });
  // Windows are counted on this clock: 30 s into a minute window, until a test moves it.
  const clock = new ManualClock(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
  // Two replicas, each with its own connection, counter client and reservations.
  const replicas = [0, 1].map(() => {
    const nats = new NatsConnectionHolder(config);
    return { nats, budget: new ExecutionBudget(new NatsKvRateLimitStore(nats, config, clock), config, clock) };
  });
  const takeMany = (replica: number, workspace: string, n: number) =>
    Promise.all(Array.from({ length: n }, () => replicas[replica]!.budget.take(issueWorkspaceScope(workspace))));
  const allowed = (answers: boolean[]) => answers.filter(Boolean).length;
  // What the shared counter holds: one more hit of its own, taken back out of the answer.
  const counted = async (workspace: string) =>
    (await new NatsKvRateLimitStore(replicas[1]!.nats, config, clock).hit(`ws.${workspace}.execute`, 60_000)).count - 1;

  afterAll(async () => {
    // The key-value bucket is the stream KV_<bucket>.
    const jsm = await jetstreamManager(await replicas[0]!.nats.get());
    await jsm.streams.delete(`KV_${config.NATS_PREFIX}_ratelimit`);
    await Promise.all(replicas.map((r) => r.nats.onApplicationShutdown()));
  });

  it('reserves a fiftieth of the limit at a time, at least 1 and at most 20', () => {
    expect([1, 49, 50, 100, 500, 999, 5000].map(reservationSize)).toEqual([1, 1, 1, 2, 10, 19, 20]);
  });

  it('one replica alone allows exactly the limit, however the takes overlap, and then stops asking', async () => {
    const answers = [...(await takeMany(0, 'alone', 37)), ...(await takeMany(0, 'alone', 80))];
    expect(allowed(answers)).toBe(100);
    expect(answers.slice(0, 100).every(Boolean)).toBe(true);
    // The limit, and the one reservation that found nothing left: the 17 refusals asked once between them.
    expect(await counted('alone')).toBe(100 + reservationSize(100));
  });

  it('two replicas together never allow more than the limit, and lose at most a reservation each', async () => {
    const answers = await Promise.all([takeMany(0, 'shared', 70), takeMany(1, 'shared', 70)]);
    const total = allowed(answers.flat());
    expect(total).toBeLessThanOrEqual(100);
    expect(total).toBeGreaterThanOrEqual(100 - 2 * (reservationSize(100) - 1));
  });

  it('a new window gives the budget back', async () => {
    expect(allowed(await takeMany(0, 'windows', 101))).toBe(100);
    expect(await replicas[0]!.budget.take(issueWorkspaceScope('windows'))).toBe(false);
    clock.advance(60_000);
    expect(allowed(await takeMany(0, 'windows', 3))).toBe(3);
  });
});
