import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope, Transactions } from '@strata/db';
import { NatsConnectionHolder } from '@strata/platform';
import { ManualClock } from '@strata/testing';
import { RunDocumentsRepository } from '../src/run-documents/run-documents.repository.js';
import { RunJobs } from '../src/runs/run-jobs.js';
import { RunQueue, type RunRequest } from '../src/runs/run-queue.js';
import { RunSweeper } from '../src/runs/run-sweeper.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { WorkspaceBacklogs } from '../src/runs/workspace-backlogs.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';
import { computeTestConfig } from './support/compute-config.js';

/**
 * The sweep publishes again the jobs of queued runs that have none, and only
 * those: a run waiting in a queue (or in a worker) is not lost. Real
 * PostgreSQL and JetStream, a manual clock, and sweeps called one at a time.
 */
describe('the sweep re-publishing lost jobs', () => {
  let db: ComputeTestDatabase;
  const config = computeTestConfig();
  const nats = new NatsConnectionHolder(config);
  const clock = new ManualClock(Date.parse('2026-11-26T12:00:00.000Z'));
  let runs: RunsRepository;
  let jobs: RunJobs;
  let queue: RunQueue;
  let sweeper: RunSweeper;

  beforeAll(async () => {
    db = await openComputeTestDatabase('sweep-r');
    runs = new RunsRepository(db.ds);
    jobs = new RunJobs(nats, config, new WorkspaceBacklogs(runs, config, clock));
    await jobs.onApplicationBootstrap();
    queue = new RunQueue(runs, jobs, config, clock);
    sweeper = new RunSweeper(runs, jobs, new RunDocumentsRepository(db.ds), config, clock);
  });

  afterAll(async () => {
    await nats.onApplicationShutdown();
    await db?.close();
  });

  const test = (): RunRequest => ({
    target: { kind: 'code', code: 'async function run() { return 1; }', codeHash: 'e'.repeat(64) },
    triggerId: null,
    source: 'manual',
    params: { triggerParams: {}, executionParams: {} },
    context: { invocationDepth: 0 },
    by: 'user-1',
  });
  /** A queued run whose job was never published (a publish that failed after the insert). */
  const lostRun = (workspace: string) =>
    new Transactions(db.ds).run((tx) => queue.insertIn(issueWorkspaceScope(workspace), tx, test()));
  const jobsOf = async (workspace: string) => (await jobs.jobsByWorkspace()).get(workspace) ?? 0;
  const stale = () => clock.advance(config.COMPUTE_REPUBLISH_AFTER_MS + 1000);

  it('leaves runs whose jobs wait in the queue alone, however long they wait', async () => {
    for (let i = 0; i < 3; i++) await queue.enqueue(issueWorkspaceScope('sweep-waiting'), test());
    stale();
    expect((await sweeper.sweep()).republished).toBe(0);
    stale();
    expect((await sweeper.sweep()).republished).toBe(0);
    expect(await jobsOf('sweep-waiting')).toBe(3);
  });

  it('publishes the job of a lost run once, and none while it waits again', async () => {
    await lostRun('sweep-lost');
    expect(await jobsOf('sweep-lost')).toBe(0);
    stale();
    expect((await sweeper.sweep()).republished).toBe(1);
    expect(await jobsOf('sweep-lost')).toBe(1);
    // Its job waits now: the next sweeps publish nothing more.
    expect((await sweeper.sweep()).republished).toBe(0);
    stale();
    expect((await sweeper.sweep()).republished).toBe(0);
    expect(await jobsOf('sweep-lost')).toBe(1);
  });

  it('publishes as many jobs as a workspace is missing, beside jobs that only wait', async () => {
    for (let i = 0; i < 2; i++) await queue.enqueue(issueWorkspaceScope('sweep-mixed'), test());
    await lostRun('sweep-mixed');
    stale();
    expect((await sweeper.sweep()).republished).toBe(1);
    expect(await jobsOf('sweep-mixed')).toBe(3);
  });
});
