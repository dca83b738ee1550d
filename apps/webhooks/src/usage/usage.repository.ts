import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { lockQuota, managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** What a workspace's webhook subscriptions count against its plan (docs/plans.md). */
@Injectable()
export class WebhooksUsageRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The count, locked until `tx` ends: concurrent creates are counted one after another. */
  async countLocked(scope: WorkspaceScope, tx: Tx): Promise<number> {
    await lockQuota(this.db, tx, scope, 'webhookSubscriptions');
    return this.count(scope, tx);
  }

  async count(scope: WorkspaceScope, tx?: Tx): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<[{ n: number }]>(
      'SELECT count(*)::int AS n FROM webhooks.subscriptions WHERE workspace_slug = $1 AND deleted_at IS NULL',
      [scope.workspace],
    );
    return row.n;
  }
}
