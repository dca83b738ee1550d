import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import { OrchestrationEntity } from './orchestration.entity.js';

const SORT_COLUMNS = { createdAt: 'o.created_at', updatedAt: 'o.updated_at', name: 'o.name', slug: 'o.slug' } as const;
export type OrchestrationSortField = keyof typeof SORT_COLUMNS;
export const ORCHESTRATION_SORT_FIELDS = Object.keys(SORT_COLUMNS) as OrchestrationSortField[];

export interface OrchestrationListQuery {
  readonly page: number;
  readonly pageSize: number;
  readonly sort: OrchestrationSortField;
  readonly order: 'asc' | 'desc';
}

/**
 * orchestration.orchestrations and orchestration.orchestration_versions within one
 * workspace; a version row is written in the transaction of the state it records.
 */
@Injectable()
export class OrchestrationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(
    scope: WorkspaceScope,
    tx: Tx,
    o: Omit<OrchestrationEntity, 'workspaceSlug'>,
  ): Promise<OrchestrationEntity> {
    const row = this.db.manager.create(OrchestrationEntity, { ...o, workspaceSlug: scope.workspace });
    // Plain SQL: the query builder's types recurse without end on the steps' JSON type.
    await managerOf(this.db, tx).query(
      `INSERT INTO orchestration.orchestrations (id, workspace_slug, slug, name, description, status, version, trigger,
         steps, created_by, updated_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        row.id,
        scope.workspace,
        row.slug,
        row.name,
        row.description,
        row.status,
        row.version,
        JSON.stringify(row.trigger),
        JSON.stringify(row.steps),
        row.createdBy,
        row.updatedBy,
        row.createdAt,
        row.updatedAt,
      ],
    );
    await this.recordVersion(scope, tx, row);
    return row;
  }

  async find(scope: WorkspaceScope, id: string, tx?: Tx): Promise<OrchestrationEntity | undefined> {
    const query = managerOf(this.db, tx)
      .createQueryBuilder(OrchestrationEntity, 'o')
      .where('o.workspace_slug = :workspace AND o.id = :id', { workspace: scope.workspace, id });
    if (tx) query.setLock('pessimistic_write');
    return (await query.getOne()) ?? undefined;
  }

  /** The active orchestrations of the workspace whose event-driven trigger watches `eventType` on `structureSlug`. */
  async watching(scope: WorkspaceScope, eventType: string, structureSlug: string): Promise<OrchestrationEntity[]> {
    return this.db
      .createQueryBuilder(OrchestrationEntity, 'o')
      .where(
        `o.workspace_slug = :workspace AND o.status = 'active' AND o.trigger->>'type' = 'event-driven'
         AND o.trigger->>'eventType' = :eventType AND o.trigger->>'structureSlug' = :structureSlug`,
        { workspace: scope.workspace, eventType, structureSlug },
      )
      .orderBy('o.id', 'ASC')
      .getMany();
  }

  /** The orchestration whose http-trigger has `path`. */
  async byWebhookPath(scope: WorkspaceScope, path: string): Promise<OrchestrationEntity | undefined> {
    const found = await this.db
      .createQueryBuilder(OrchestrationEntity, 'o')
      .where(`o.workspace_slug = :workspace AND o.trigger->>'type' = 'http-trigger' AND o.trigger->>'path' = :path`, {
        workspace: scope.workspace,
        path,
      })
      .getOne();
    return found ?? undefined;
  }

  async list(
    scope: WorkspaceScope,
    q: OrchestrationListQuery,
  ): Promise<{ rows: OrchestrationEntity[]; total: number }> {
    const direction = q.order === 'asc' ? 'ASC' : 'DESC';
    const [rows, total] = await this.db
      .createQueryBuilder(OrchestrationEntity, 'o')
      .where('o.workspace_slug = :workspace', { workspace: scope.workspace })
      .orderBy(SORT_COLUMNS[q.sort], direction)
      .addOrderBy('o.id', direction)
      .skip((q.page - 1) * q.pageSize)
      .take(q.pageSize)
      .getManyAndCount();
    return { rows, total };
  }

  /** Writes the new state of an orchestration locked in `tx`, and its version row. */
  async save(scope: WorkspaceScope, tx: Tx, o: OrchestrationEntity): Promise<void> {
    await managerOf(this.db, tx).query(
      `UPDATE orchestration.orchestrations SET name = $3, description = $4, status = $5, version = $6, trigger = $7,
              steps = $8, updated_by = $9, updated_at = $10
        WHERE workspace_slug = $1 AND id = $2`,
      [
        scope.workspace,
        o.id,
        o.name,
        o.description,
        o.status,
        o.version,
        JSON.stringify(o.trigger),
        JSON.stringify(o.steps),
        o.updatedBy,
        o.updatedAt,
      ],
    );
    await this.recordVersion(scope, tx, o);
  }

  async delete(scope: WorkspaceScope, id: string): Promise<boolean> {
    const result = await this.db
      .createQueryBuilder()
      .delete()
      .from(OrchestrationEntity)
      .where('workspace_slug = :workspace AND id = :id', { workspace: scope.workspace, id })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  private async recordVersion(scope: WorkspaceScope, tx: Tx, o: OrchestrationEntity): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO orchestration.orchestration_versions
         (orchestration_id, workspace_slug, version, name, status, trigger, steps, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        o.id,
        scope.workspace,
        o.version,
        o.name,
        o.status,
        JSON.stringify(o.trigger),
        JSON.stringify(o.steps),
        o.updatedBy,
        o.updatedAt,
      ],
    );
  }
}
