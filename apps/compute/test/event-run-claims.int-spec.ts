import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { issueWorkspaceScope } from '@strata/db';
import { RunsRepository, type HeldRun, type NewRun } from '../src/runs/runs.repository.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';
import { eventRun } from './support/new-run.js';

/**
 * An event's run is offered to a worker, which writes it as running with the
 * (event, trigger) pair, and queued by the API when no worker took it in
 * time: whichever of the two writes reaches PostgreSQL first, the pair's key
 * lets exactly one run exist, and a redelivered event writes none.
 */
describe('the two writes of an event run against a real PostgreSQL', () => {
  let db: ComputeTestDatabase;
  let ds: DataSource;
  let runs: RunsRepository;
  let functionId: string;
  const scope = issueWorkspaceScope('event-runs-a');
  const triggerId = randomUUID();
  const now = new Date('2026-11-24T06:00:00Z');

  const queued = (id: string): NewRun => eventRun({ id, functionId, triggerId, queuedAt: now });
  const heldBy = (run: NewRun, worker: string): HeldRun => ({
    ...run,
    held: { by: worker, until: new Date(now.getTime() + 30_000), startedAt: now },
  });
  const pair = (eventId: string) => ({ eventId, triggerId, at: now });
  /** The runs of one event's pair with the test's trigger. */
  const pairRuns = (eventId: string) =>
    ds.query<{ status: string; worker_id: string | null }[]>(
      `SELECT r.status, r.worker_id FROM compute.runs r
         JOIN compute.trigger_event_runs p ON p.run_id = r.id
        WHERE p.event_id = $1 AND p.trigger_id = $2`,
      [eventId, triggerId],
    );

  beforeAll(async () => {
    db = await openComputeTestDatabase(scope.workspace);
    ({ ds, functionId } = db);
    runs = new RunsRepository(ds);
  });

  afterAll(async () => {
    await db?.close();
  });

  it("a worker's write first: the API's queued write for the pair adds nothing", async () => {
    const id = randomUUID();
    expect(await runs.insertForEvent(scope, heldBy(queued(id), 'worker-1'), pair('evt-worker'))).toBeDefined();
    expect(await runs.insertForEvent(scope, queued(randomUUID()), pair('evt-worker'))).toBeUndefined();
    expect(await pairRuns('evt-worker')).toEqual([{ status: 'running', worker_id: 'worker-1' }]);
  });

  it("the API's write first (no worker answered in time): the worker's late write starts nothing", async () => {
    const id = randomUUID();
    expect(await runs.insertForEvent(scope, queued(id), pair('evt-api'))).toBeDefined();
    expect(await runs.insertForEvent(scope, heldBy(queued(randomUUID()), 'worker-1'), pair('evt-api'))).toBeUndefined();
    expect(await pairRuns('evt-api')).toEqual([{ status: 'queued', worker_id: null }]);
  });

  it('both at once, for many events: exactly one run per pair', async () => {
    const events = Array.from({ length: 40 }, (_, i) => `evt-race-${i}`);
    const written = await Promise.all(
      events.flatMap((eventId) => [
        runs.insertForEvent(scope, heldBy(queued(randomUUID()), 'worker-1'), pair(eventId)),
        runs.insertForEvent(scope, queued(randomUUID()), pair(eventId)),
      ]),
    );
    expect(written.filter((run) => run !== undefined)).toHaveLength(events.length);
    for (const eventId of events) expect(await pairRuns(eventId)).toHaveLength(1);
  });

  it('a redelivered event writes no second run, whoever wrote the first', async () => {
    await runs.insertForEvent(scope, heldBy(queued(randomUUID()), 'worker-1'), pair('evt-again'));
    expect(
      await runs.insertForEvent(scope, heldBy(queued(randomUUID()), 'worker-2'), pair('evt-again')),
    ).toBeUndefined();
    expect(await runs.insertForEvent(scope, queued(randomUUID()), pair('evt-again'))).toBeUndefined();
    expect(await pairRuns('evt-again')).toHaveLength(1);
  });
});
