import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { issueWorkspaceScope } from '@strata/db';
import { EventRunsRepository } from '../src/events/event-runs.repository.js';
import { RunDocumentsRepository } from '../src/run-documents/run-documents.repository.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';
import { eventRun } from './support/new-run.js';

const DAY_MS = 24 * 3_600_000;

/** The run sweep's clean-ups delete what is due, and say how many rows went (its log line reports them). */
describe("the run sweep's clean-ups, against a real PostgreSQL", () => {
  let db: ComputeTestDatabase;
  let ds: DataSource;
  let runs: RunsRepository;
  let functionId: string;
  const scope = issueWorkspaceScope('sweep-counts-a');
  const now = new Date('2026-11-26T08:00:00Z');

  beforeAll(async () => {
    db = await openComputeTestDatabase(scope.workspace, 2);
    ({ ds, functionId } = db);
    runs = new RunsRepository(ds);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** An event's run, with its (event, trigger) pair written at `at`; its id. */
  async function runOfEvent(at: Date): Promise<string> {
    const run = eventRun({ functionId, queuedAt: at });
    const written = await runs.insertForEvent(scope, run, { eventId: randomUUID(), triggerId: run.triggerId!, at });
    expect(written).toBeDefined();
    return run.id;
  }

  it('forgets the (event, trigger) pairs older than the cut-off, and counts them', async () => {
    const events = new EventRunsRepository(ds);
    const old = new Date(now.getTime() - 9 * DAY_MS);
    for (let i = 0; i < 3; i++) await runOfEvent(old);
    await runOfEvent(now);
    const cutOff = new Date(now.getTime() - 8 * DAY_MS);

    expect(await events.forgetBefore(cutOff, 1000)).toBe(3);
    expect(await events.forgetBefore(cutOff, 1000)).toBe(0);
  });

  it('deletes the expired run documents, and counts them', async () => {
    const documents = new RunDocumentsRepository(ds);
    const runId = await runOfEvent(now);
    const caps = { maxCount: 10, maxBytes: 1_000_000 };
    const document = (name: string, expiresAt: Date) => ({
      id: randomUUID(),
      runId,
      name,
      sealed: 'sealed',
      sizeBytes: 2,
      createdAt: now,
      expiresAt,
    });
    expect(await documents.insert(scope, document('gone-1', new Date(now.getTime() - 1)), caps)).toBe(true);
    expect(await documents.insert(scope, document('gone-2', now), caps)).toBe(true);
    expect(await documents.insert(scope, document('kept', new Date(now.getTime() + DAY_MS)), caps)).toBe(true);

    expect(await documents.deleteExpired(now, 1000)).toBe(2);
    expect(await documents.deleteExpired(now, 1000)).toBe(0);
  });
});
