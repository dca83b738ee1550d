import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { lockQuota, managerOf, type Tx, type WorkspaceScope } from '@strata/db';

export type CountedResource = 'functions' | 'triggers';

/** The statement counting each resource: live rows; system triggers (the test runner's) are the platform's. */
const COUNTS: Record<CountedResource, string> = {
  functions: 'SELECT count(*)::int AS n FROM compute.functions WHERE workspace_slug = $1 AND deleted_at IS NULL',
  triggers:
    'SELECT count(*)::int AS n FROM compute.triggers WHERE workspace_slug = $1 AND deleted_at IS NULL AND NOT is_system',
};

/** What a workspace's functions and triggers count against its plan (docs/plans.md). */
@Injectable()
export class ComputeUsageRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The count, locked until `tx` ends: concurrent creates are counted one after another. */
  async countLocked(scope: WorkspaceScope, tx: Tx, resource: CountedResource): Promise<number> {
    await lockQuota(this.db, tx, scope, resource);
    return this.count(scope, resource, tx);
  }

  async count(scope: WorkspaceScope, resource: CountedResource, tx?: Tx): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<[{ n: number }]>(COUNTS[resource], [scope.workspace]);
    return row.n;
  }

  /** Function executions the workspace started in `month` (`YYYY-MM-01`, UTC). */
  async executions(scope: WorkspaceScope, month: string, tx?: Tx): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<[{ n: string }]>(
      `SELECT coalesce(sum(executions), 0) AS n FROM compute.usage_executions
        WHERE workspace_slug = $1 AND month = $2::date`,
      [scope.workspace, month],
    );
    return Number(row.n);
  }
}
