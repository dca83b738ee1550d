import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { JsonObject } from '../json.js';
import { DraftEntity } from './draft.entity.js';

/** compute.drafts within one workspace (`workspace_slug = scope.workspace` in every statement). */
@Injectable()
export class DraftsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(scope: WorkspaceScope, draft: Omit<DraftEntity, 'workspaceSlug'>): Promise<DraftEntity> {
    const row = this.db.manager.create(DraftEntity, { ...draft, workspaceSlug: scope.workspace });
    // TypeORM's deep-partial type of the JSON column recurses without end (TS2589); the row is complete.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- without it tsc stops at TS2589
    await this.db.manager.insert(DraftEntity, row as never);
    return row;
  }

  /** A draft of the workspace, locked FOR UPDATE when `tx` is given. */
  async find(scope: WorkspaceScope, id: string, tx?: Tx): Promise<DraftEntity | undefined> {
    const query = managerOf(this.db, tx)
      .createQueryBuilder(DraftEntity, 'd')
      .where('d.workspace_slug = :workspace AND d.id = :id', { workspace: scope.workspace, id });
    if (tx) query.setLock('pessimistic_write');
    return (await query.getOne()) ?? undefined;
  }

  list(scope: WorkspaceScope, resourceType: string | undefined): Promise<DraftEntity[]> {
    const query = this.db
      .createQueryBuilder(DraftEntity, 'd')
      .where('d.workspace_slug = :workspace', { workspace: scope.workspace });
    if (resourceType) query.andWhere('d.resource_type = :resourceType', { resourceType });
    return query.orderBy('d.created_at', 'DESC').addOrderBy('d.id', 'ASC').limit(1000).getMany();
  }

  async replaceData(scope: WorkspaceScope, id: string, data: JsonObject, now: Date): Promise<boolean> {
    const result = await this.db
      .createQueryBuilder()
      .update(DraftEntity)
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- without it tsc stops at TS2589
      .set({ data: data as never, updatedAt: now })
      .where('workspace_slug = :workspace AND id = :id', { workspace: scope.workspace, id })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  async delete(scope: WorkspaceScope, id: string, tx?: Tx): Promise<boolean> {
    const result = await managerOf(this.db, tx)
      .createQueryBuilder()
      .delete()
      .from(DraftEntity)
      .where('workspace_slug = :workspace AND id = :id', { workspace: scope.workspace, id })
      .execute();
    return (result.affected ?? 0) > 0;
  }
}
