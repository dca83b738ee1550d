import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { pageOf } from '../lists/page-query.repository.js';
import { isUniqueViolation, managerOf, queryPrepared, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { SortKey } from '../functions/function-list.js';
import type { JsonObject } from '../json.js';
import { TriggerEntity } from './trigger.entity.js';

export interface NewTrigger {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly functionId: string;
  readonly executionType: string;
  readonly metadata: JsonObject;
  readonly by: string;
}

/** The version of a function a run executes. */
export interface FunctionVersionRef {
  readonly id: string;
  readonly version: number;
  readonly codeHash: string;
}

export interface TriggerChanges {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly metadata?: JsonObject | undefined;
}

const SORT_COLUMNS = { name: 't.name', createdAt: 't.created_at', updatedAt: 't.updated_at' } as const;
const SEARCH_COLUMNS = { name: 't.name', description: 't.description', executionType: 't.execution_type' } as const;
export type TriggerSortField = keyof typeof SORT_COLUMNS;
export type TriggerSearchField = keyof typeof SEARCH_COLUMNS;
export const TRIGGER_SORT_FIELDS = Object.keys(SORT_COLUMNS) as TriggerSortField[];
/** Newest first, when a list names no sort. */
export const DEFAULT_TRIGGER_SORT: readonly SortKey<TriggerSortField>[] = [{ field: 'createdAt', direction: 'desc' }];
export const TRIGGER_SEARCH_FIELDS = Object.keys(SEARCH_COLUMNS) as TriggerSearchField[];

export interface TriggerListQuery {
  readonly search: string | undefined;
  readonly searchField: TriggerSearchField;
  readonly limit: number;
  readonly page: number;
  readonly sort: readonly SortKey<TriggerSortField>[];
}

/** The system default trigger's name. */
export const SYSTEM_TRIGGER_NAME = 'system-default';

/**
 * compute.triggers and compute.trigger_versions within one workspace. Every
 * statement carries `workspace_slug = scope.workspace`; a version row is
 * written in the transaction of the state it records.
 */
@Injectable()
export class TriggersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The workspace's system default trigger, made on first use. When two first
   * uses race, the one whose insert waited for the other's commit finds no row
   * in its own statement (its snapshot predates that commit), or trips over
   * the name's unique key before the arbiter's: it asks again, and the next
   * statement's snapshot sees the row.
   */
  async systemTrigger(scope: WorkspaceScope, id: string, now: Date): Promise<string> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const [row] = await this.made(scope, id, now, attempt < 2);
      if (row) return row.id;
    }
    throw new Error(`the system trigger of ${scope.workspace} was neither made nor found`);
  }

  /** One try at the system trigger: its row, none, or none when the name's key refused it and `retry` is allowed. */
  private async made(scope: WorkspaceScope, id: string, now: Date, retry: boolean): Promise<{ id: string }[]> {
    try {
      return await this.db.query<{ id: string }[]>(
        `WITH made AS (
           INSERT INTO compute.triggers (id, workspace_slug, name, description, function_id, execution_type, metadata,
                                         version, is_system, created_by, updated_by, created_at, updated_at)
           VALUES ($2, $1, $3, 'Runs test code (POST /compute-functions/test); cannot be changed or deleted', NULL,
                   'on-demand', '{"params":{}}', 1, true, 'system', 'system', $4, $4)
           ON CONFLICT (workspace_slug) WHERE is_system DO NOTHING RETURNING id)
         SELECT id FROM made UNION ALL SELECT id FROM compute.triggers WHERE workspace_slug = $1 AND is_system`,
        [scope.workspace, id, SYSTEM_TRIGGER_NAME, now],
      );
    } catch (err) {
      if (retry && isUniqueViolation(err, 'triggers_name_key')) return [];
      throw err;
    }
  }

  /** Inserts the trigger and its version 1; undefined when its function is not a live one of the workspace. */
  async insert(scope: WorkspaceScope, tx: Tx, t: NewTrigger, now: Date): Promise<TriggerEntity | undefined> {
    const manager = managerOf(this.db, tx);
    const [row] = rowsOf<{ id: string }>(
      await manager.query(
        `INSERT INTO compute.triggers (id, workspace_slug, name, description, function_id, execution_type, metadata,
                                       version, created_by, updated_by, created_at, updated_at)
         SELECT $2, f.workspace_slug, $3, $4, f.id, $6, $7, 1, $8, $8, $9, $9
           FROM compute.functions f WHERE f.workspace_slug = $1 AND f.id = $5 AND f.deleted_at IS NULL
         RETURNING id`,
        [
          scope.workspace,
          t.id,
          t.name,
          t.description,
          t.functionId,
          t.executionType,
          JSON.stringify(t.metadata),
          t.by,
          now,
        ],
      ),
    );
    if (!row) return undefined;
    await this.recordVersion(scope, tx, t.id);
    return (await this.find(scope, t.id, tx))!;
  }

  /** A live trigger of the workspace (the system one too), locked FOR UPDATE when `tx` is given. */
  async find(scope: WorkspaceScope, id: string, tx?: Tx): Promise<TriggerEntity | undefined> {
    const query = managerOf(this.db, tx)
      .createQueryBuilder(TriggerEntity, 't')
      .where('t.workspace_slug = :workspace AND t.id = :id AND t.deleted_at IS NULL', {
        workspace: scope.workspace,
        id,
      });
    if (tx) query.setLock('pessimistic_write');
    return (await query.getOne()) ?? undefined;
  }

  /**
   * A live trigger of the workspace and the current version of its live
   * function, in one named prepared statement (each batch of arrivals reads it).
   */
  async findWithFunction(
    scope: WorkspaceScope,
    id: string,
    tx?: Tx,
  ): Promise<{ trigger: TriggerEntity; fn: FunctionVersionRef | undefined } | undefined> {
    const [found] = await this.withFunctions(scope, 't.id = $2', [id], tx);
    return found;
  }

  /**
   * The live, running (not paused) event-driven triggers of the workspace
   * watching `event` on `recordSlug`, each with its live function's current
   * version, in one prepared statement.
   */
  watchingWithFunctions(
    scope: WorkspaceScope,
    event: string,
    recordSlug: string,
  ): Promise<{ trigger: TriggerEntity; fn: FunctionVersionRef | undefined }[]> {
    return this.withFunctions(
      scope,
      `t.execution_type = 'event-driven' AND NOT t.paused AND t.metadata->>'event' = $2
       AND t.metadata->>'recordSlug' = $3`,
      [event, recordSlug],
    );
  }

  /** Live triggers of the workspace matching `where` ($1 is the workspace), with their functions' versions. */
  private async withFunctions(
    scope: WorkspaceScope,
    where: string,
    params: unknown[],
    tx?: Tx,
  ): Promise<{ trigger: TriggerEntity; fn: FunctionVersionRef | undefined }[]> {
    const columns = this.db.getMetadata(TriggerEntity).columns;
    const rows = await queryPrepared<Record<string, unknown>>(
      managerOf(this.db, tx),
      `SELECT ${columns.map((c) => `t.${c.databaseName}`).join(', ')},
              f.id AS f_id, f.version AS f_version, f.code_hash AS f_code_hash
         FROM compute.triggers t
         LEFT JOIN compute.functions f
           ON f.workspace_slug = t.workspace_slug AND f.id = t.function_id AND f.deleted_at IS NULL
        WHERE t.workspace_slug = $1 AND t.deleted_at IS NULL AND ${where}
        ORDER BY t.id`,
      [scope.workspace, ...params],
    );
    return rows.map((raw) => {
      const trigger = this.db.manager.create(TriggerEntity);
      for (const column of columns) column.setEntityValue(trigger, raw[column.databaseName]);
      const fn =
        typeof raw['f_id'] === 'string' &&
        typeof raw['f_version'] === 'number' &&
        typeof raw['f_code_hash'] === 'string'
          ? { id: raw['f_id'], version: raw['f_version'], codeHash: raw['f_code_hash'] }
          : undefined;
      return { trigger, fn };
    });
  }

  async list(scope: WorkspaceScope, q: TriggerListQuery): Promise<{ rows: TriggerEntity[]; total: number }> {
    const query = this.db
      .createQueryBuilder(TriggerEntity, 't')
      .where('t.workspace_slug = :workspace AND t.deleted_at IS NULL', { workspace: scope.workspace });
    return pageOf(query, q, { search: SEARCH_COLUMNS, sort: SORT_COLUMNS, id: 't.id' });
  }

  /** The live http-trigger of the workspace at `path` (paused ones too). */
  async httpTriggerAt(scope: WorkspaceScope, path: string): Promise<TriggerEntity | undefined> {
    const found = await this.db
      .createQueryBuilder(TriggerEntity, 't')
      .where(
        `t.workspace_slug = :workspace AND t.execution_type = 'http-trigger' AND t.deleted_at IS NULL
         AND t.metadata->>'path' = :path`,
        { workspace: scope.workspace, path },
      )
      .getOne();
    return found ?? undefined;
  }

  /**
   * The live endpoint trigger of the workspace at `path` (paused ones too: the
   * caller answers them 404) and the current version of its live function, in one
   * prepared statement (the endpoint call's hot path, kept by TriggerLookups).
   */
  async endpointAt(
    scope: WorkspaceScope,
    path: string,
  ): Promise<{ trigger: TriggerEntity; fn: FunctionVersionRef | undefined } | undefined> {
    const [found] = await this.withFunctions(scope, `t.execution_type = 'endpoint' AND t.metadata->>'path' = $2`, [
      path,
    ]);
    return found;
  }

  /** Applies `changes` to a trigger locked in `tx` and records the new version. */
  async update(
    scope: WorkspaceScope,
    tx: Tx,
    id: string,
    c: TriggerChanges,
    by: string,
    now: Date,
  ): Promise<TriggerEntity> {
    await managerOf(this.db, tx).query(
      `UPDATE compute.triggers SET
         name = COALESCE($3, name),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         metadata = COALESCE($6::jsonb, metadata),
         version = version + 1, updated_by = $7, updated_at = $8
       WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL AND NOT is_system`,
      [
        scope.workspace,
        id,
        c.name ?? null,
        c.description !== undefined,
        c.description ?? null,
        c.metadata === undefined ? null : JSON.stringify(c.metadata),
        by,
        now,
      ],
    );
    await this.recordVersion(scope, tx, id);
    return (await this.find(scope, id, tx))!;
  }

  /** Deletes a trigger (not the system one); its versions and runs stay. Whether it was live. */
  async softDelete(scope: WorkspaceScope, tx: Tx, id: string, by: string, now: Date): Promise<boolean> {
    const rows = rowsOf(
      await managerOf(this.db, tx).query(
        `UPDATE compute.triggers SET deleted_at = $4, updated_by = $3, updated_at = $4
          WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL AND NOT is_system RETURNING id`,
        [scope.workspace, id, by, now],
      ),
    );
    return rows.length > 0;
  }

  /** Deletes every trigger of a function (deleting the function stops them); how many. */
  async deleteOfFunction(scope: WorkspaceScope, tx: Tx, functionId: string, by: string, now: Date): Promise<number> {
    const rows = rowsOf(
      await managerOf(this.db, tx).query(
        `UPDATE compute.triggers SET deleted_at = $4, updated_by = $3, updated_at = $4
          WHERE workspace_slug = $1 AND function_id = $2 AND deleted_at IS NULL RETURNING id`,
        [scope.workspace, functionId, by, now],
      ),
    );
    return rows.length;
  }

  /** Pauses or resumes; whether the trigger exists (the system one cannot be paused). */
  async setPaused(scope: WorkspaceScope, tx: Tx, id: string, paused: boolean, by: string, now: Date): Promise<boolean> {
    const rows = rowsOf(
      await managerOf(this.db, tx).query(
        `UPDATE compute.triggers SET paused = $3, updated_by = $4, updated_at = $5
          WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL AND NOT is_system RETURNING id`,
        [scope.workspace, id, paused, by, now],
      ),
    );
    return rows.length > 0;
  }

  private async recordVersion(scope: WorkspaceScope, tx: Tx, id: string): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO compute.trigger_versions (trigger_id, version, workspace_slug, name, description, function_id, metadata,
                                             created_by, created_at)
       SELECT id, version, workspace_slug, name, description, function_id, metadata, updated_by, updated_at
         FROM compute.triggers WHERE workspace_slug = $1 AND id = $2`,
      [scope.workspace, id],
    );
  }
}
