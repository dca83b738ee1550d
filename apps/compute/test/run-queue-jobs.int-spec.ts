import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { computeJobsStream, computeJobSubject, type ComputeJob, type ComputeJobLane } from '@strata/contracts';
import { issueWorkspaceScope, Transactions } from '@strata/db';
import { NatsConnectionHolder, systemClock } from '@strata/platform';
import { ManualClock } from '@strata/testing';
import { RunJobs } from '../src/runs/run-jobs.js';
import { RunQueue, type RunRequest } from '../src/runs/run-queue.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { WorkspaceBacklogs } from '../src/runs/workspace-backlogs.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';
import { computeTestConfig } from './support/compute-config.js';

/**
 * The jobs RunQueue publishes, read back from a real JetStream stream, for runs
 * written to a real PostgreSQL: a job carries its run (so a worker starts it
 * without reading its row, docs/compute.md) whenever the run can travel in a
 * message, and only its id otherwise.
 */
describe('the jobs of queued runs', () => {
  let db: ComputeTestDatabase;
  const config = computeTestConfig();
  const nats = new NatsConnectionHolder(config);
  let queue: RunQueue;
  let runs: RunsRepository;

  beforeAll(async () => {
    db = await openComputeTestDatabase('jobs-a');
    runs = new RunsRepository(db.ds);
    const jobs = new RunJobs(nats, config, new WorkspaceBacklogs(runs, config, systemClock));
    await jobs.onApplicationBootstrap();
    queue = new RunQueue(runs, jobs, config, systemClock);
  });

  afterAll(async () => {
    await nats.onApplicationShutdown();
    await db?.close();
  });

  /** The last job published for the workspace on `lane`. */
  async function lastJob(workspace: string, lane: ComputeJobLane = 'jobs'): Promise<ComputeJob> {
    const jsm = await jetstreamManager(await nats.get());
    const stored = await jsm.streams.getMessage(computeJobsStream(config.NATS_PREFIX, lane).name, {
      last_by_subj: computeJobSubject(config.NATS_PREFIX, workspace, lane),
    });
    return stored!.json<ComputeJob>();
  }

  const request = (overrides: Partial<RunRequest> = {}): RunRequest => ({
    target: { kind: 'function', functionId: db.functionId, version: 1, codeHash: 'a'.repeat(64) },
    triggerId: null,
    source: 'manual',
    params: { triggerParams: {}, executionParams: { n: 1 } },
    context: { invocationDepth: 0 },
    by: 'user-1',
    ...overrides,
  });

  it('carries a test run with its code, and a saved version by its number, as the row holds them', async () => {
    const scope = issueWorkspaceScope('jobs-a');
    const code = 'async function run() { return { success: true }; }';
    const test = await queue.enqueue(scope, request({ target: { kind: 'code', code, codeHash: 'b'.repeat(64) } }));
    const job = await lastJob(scope.workspace);
    expect(job).toMatchObject({ runId: test.runId, workspaceSlug: 'jobs-a' });
    expect(job.run).toMatchObject({ jobId: test.jobId, functionId: null, functionVersion: null, code });
    const [row] = await db.ds.query<{ params: string; queued_at: Date }[]>(
      'SELECT params, queued_at FROM compute.runs WHERE id = $1',
      [test.runId],
    );
    // The parameters travel sealed, exactly as stored.
    expect(job.run?.params).toBe(row!.params);
    expect(job.run?.params).not.toContain('"n":1');
    expect(job.run?.queuedAt).toBe(row!.queued_at.toISOString());

    const saved = await queue.enqueue(scope, request());
    expect((await lastJob(scope.workspace)).run).toMatchObject({
      jobId: saved.jobId,
      functionId: db.functionId,
      functionVersion: 1,
    });
  });

  it('carries a run inserted in a transaction (a scheduled occurrence) once it is published after the commit', async () => {
    const scope = issueWorkspaceScope('jobs-a');
    const job = await new Transactions(db.ds).run((tx) => queue.insertIn(scope, tx, request({ source: 'scheduled' })));
    expect(Object.keys(job).sort()).toEqual(['jobId', 'queuedAt', 'runId', 'status']);
    await queue.publishMany([{ scope, job }]);
    expect((await lastJob(scope.workspace)).run).toMatchObject({ jobId: job.jobId, executionSource: 'scheduled' });
  });

  it('sends only the id of a re-run, and of a run whose parameters are too large for a message', async () => {
    const scope = issueWorkspaceScope('jobs-a');
    const original = await queue.enqueue(scope, request());
    const rerun = await new Transactions(db.ds).run((tx) =>
      queue.insertIn(scope, tx, {
        ...request({ source: 'rerun' }),
        rerunOf: { runId: original.runId, by: 'user-1', reason: null },
      }),
    );
    await queue.publish(scope, rerun);
    expect(await lastJob(scope.workspace)).toEqual({ runId: rerun.runId, workspaceSlug: 'jobs-a' });

    const large = await queue.enqueue(
      scope,
      request({ params: { triggerParams: {}, executionParams: { blob: 'x'.repeat(300 * 1024) } } }),
    );
    expect(await lastJob(scope.workspace)).toEqual({ runId: large.runId, workspaceSlug: 'jobs-a' });
  });

  it('puts the jobs of a workspace that queued more than COMPUTE_BACKLOG_AFTER runs recently on the backlog queue', async () => {
    const scope = issueWorkspaceScope('jobs-b');
    const test = () =>
      request({ target: { kind: 'code', code: 'async function run() { return 1; }', codeHash: 'c'.repeat(64) } });
    const queued = [];
    for (let i = 0; i <= config.COMPUTE_BACKLOG_AFTER; i++) queued.push(await queue.enqueue(scope, test()));
    // The runs up to the limit went to the work queue, the one past it to the backlog.
    expect((await lastJob(scope.workspace)).runId).toBe(queued[config.COMPUTE_BACKLOG_AFTER - 1]!.runId);
    expect((await lastJob(scope.workspace, 'backlog')).runId).toBe(queued[config.COMPUTE_BACKLOG_AFTER]!.runId);
    // Another workspace's run is not held back by it.
    const other = await queue.enqueue(issueWorkspaceScope('jobs-c'), test());
    expect((await lastJob('jobs-c')).runId).toBe(other.runId);
  });

  it('decides by the runs a workspace queued in the window, not by those still waiting', async () => {
    // A workspace whose runs wait long (others' backlogs hold the isolates) is not heavy for that.
    const clock = new ManualClock(Date.parse('2026-11-26T12:00:00.000Z'));
    const jobs = new RunJobs(nats, config, new WorkspaceBacklogs(runs, config, clock));
    const clocked = new RunQueue(runs, jobs, config, clock);
    const scope = issueWorkspaceScope('jobs-d');
    const test = () =>
      request({ target: { kind: 'code', code: 'async function run() { return 1; }', codeHash: 'd'.repeat(64) } });
    const queued = [];
    for (let i = 0; i <= config.COMPUTE_BACKLOG_AFTER; i++) queued.push(await clocked.enqueue(scope, test()));
    expect((await lastJob(scope.workspace, 'backlog')).runId).toBe(queued[config.COMPUTE_BACKLOG_AFTER]!.runId);
    // A window later every one of them is still queued (no worker runs here), and the next run is light.
    clock.advance(config.COMPUTE_BACKLOG_WINDOW_MS + 1000);
    const later = await clocked.enqueue(scope, test());
    expect((await lastJob(scope.workspace)).runId).toBe(later.runId);
  });
});
