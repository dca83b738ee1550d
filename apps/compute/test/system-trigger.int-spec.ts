import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import { TriggersRepository } from '../src/triggers/triggers.repository.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';

/**
 * The system default trigger is made by the first test run of a workspace. A
 * workspace's first test runs often come together (a script, a CI job): each
 * must get the one trigger, not a 500.
 */
describe("a workspace's system trigger, made on first use, against a real PostgreSQL", () => {
  let db: ComputeTestDatabase;
  let triggers: TriggersRepository;

  beforeAll(async () => {
    db = await openComputeTestDatabase('system-trigger-a', 8);
    triggers = new TriggersRepository(db.ds);
  });

  afterAll(async () => {
    await db?.close();
  });

  it('gives every one of many concurrent first uses the same trigger', async () => {
    for (const workspace of ['race-1', 'race-2', 'race-3', 'race-4', 'race-5']) {
      const scope = issueWorkspaceScope(workspace);
      const ids = await Promise.all(
        Array.from({ length: 24 }, () => triggers.systemTrigger(scope, randomUUID(), new Date())),
      );
      expect(new Set(ids).size).toBe(1);
      const rows = await db.ds.query<{ id: string }[]>(
        'SELECT id FROM compute.triggers WHERE workspace_slug = $1 AND is_system',
        [workspace],
      );
      expect(rows).toEqual([{ id: ids[0] }]);
    }
  });
});
