import type { DataSource } from 'typeorm';
import { managerOf, type Tx } from './transactions.js';
import type { WorkspaceScope } from './workspace-scope.js';

/**
 * Holds, until `tx` ends, a lock on the count of one workspace's `resource`
 * (a transaction-scoped advisory lock): two creates that count, check the plan's
 * limit and insert take their turn, so that together they never pass the limit
 * (docs/plans.md). For the few-rowed resources only (functions, triggers,
 * subscriptions): records never take it.
 */
export async function lockQuota(db: DataSource, tx: Tx, scope: WorkspaceScope, resource: string): Promise<void> {
  await managerOf(db, tx).query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `quota:${scope.workspace}:${resource}`,
  ]);
}
