import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { lockQuota, managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** What a workspace's orchestrations count against its plan (docs/plans.md). */
@Injectable()
export class OrchestrationUsageRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The count, locked until `tx` ends: concurrent creates are counted one after another. */
  async countLocked(scope: WorkspaceScope, tx: Tx): Promise<number> {
    await lockQuota(this.db, tx, scope, 'orchestrations');
    return this.count(scope, tx);
  }

  async count(scope: WorkspaceScope, tx?: Tx): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<[{ n: number }]>(
      'SELECT count(*)::int AS n FROM orchestration.orchestrations WHERE workspace_slug = $1',
      [scope.workspace],
    );
    return row.n;
  }
}
