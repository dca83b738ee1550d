import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { pageOf } from '../lists/page-query.repository.js';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import { FunctionEntity } from './function.entity.js';
import { FunctionVersionEntity } from './function-version.entity.js';

export interface SortKey<F extends string = FunctionSortField> {
  readonly field: F;
  readonly direction: 'asc' | 'desc';
}

/** A checked function list query, defaults applied. */
export interface FunctionListQuery {
  readonly search: string | undefined;
  readonly searchField: FunctionSearchField;
  readonly limit: number;
  readonly page: number;
  readonly sort: readonly SortKey[];
}

export interface NewFunction {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly code: string;
  readonly codeHash: string;
  readonly by: string;
}

/** What an update may change; absent fields stay. */
export interface FunctionChanges {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly code?: string | undefined;
  readonly codeHash?: string | undefined;
}

/** The columns of a list row: everything but the code. */
export type FunctionSummary = Omit<FunctionEntity, 'code'>;

const SORT_COLUMNS = { name: 'f.name', createdAt: 'f.created_at', updatedAt: 'f.updated_at' } as const;
const SEARCH_COLUMNS = { name: 'f.name', description: 'f.description' } as const;
export type FunctionSortField = keyof typeof SORT_COLUMNS;
export type FunctionSearchField = keyof typeof SEARCH_COLUMNS;
export const FUNCTION_SORT_FIELDS = Object.keys(SORT_COLUMNS) as FunctionSortField[];
export const FUNCTION_SEARCH_FIELDS = Object.keys(SEARCH_COLUMNS) as FunctionSearchField[];

/**
 * compute.functions and compute.function_versions, always within one workspace:
 * every statement carries `workspace_slug = scope.workspace`, and a version row
 * is written in the same transaction as the function state it records.
 */
@Injectable()
export class FunctionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the function and its version 1. */
  async insert(scope: WorkspaceScope, tx: Tx, f: NewFunction, now: Date): Promise<FunctionEntity> {
    const manager = managerOf(this.db, tx);
    const row = manager.create(FunctionEntity, {
      id: f.id,
      workspaceSlug: scope.workspace,
      name: f.name,
      description: f.description,
      code: f.code,
      codeHash: f.codeHash,
      version: 1,
      createdBy: f.by,
      updatedBy: f.by,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    });
    await manager.insert(FunctionEntity, row);
    await this.recordVersion(row, tx);
    return row;
  }

  /** The current code of those of `ids` that name live functions of the workspace. */
  async liveCode(scope: WorkspaceScope, ids: readonly string[]): Promise<{ id: string; code: string }[]> {
    if (ids.length === 0) return [];
    return this.db.query<{ id: string; code: string }[]>(
      'SELECT id, code FROM compute.functions WHERE workspace_slug = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL',
      [scope.workspace, ids],
    );
  }

  /** A live function of the workspace, locked FOR UPDATE when `tx` is given. */
  async find(scope: WorkspaceScope, id: string, tx?: Tx): Promise<FunctionEntity | undefined> {
    const query = managerOf(this.db, tx)
      .createQueryBuilder(FunctionEntity, 'f')
      .where('f.workspace_slug = :workspace AND f.id = :id AND f.deleted_at IS NULL', {
        workspace: scope.workspace,
        id,
      });
    if (tx) query.setLock('pessimistic_write');
    return (await query.getOne()) ?? undefined;
  }

  /** A page of live functions without their code, and how many match. */
  async list(scope: WorkspaceScope, q: FunctionListQuery): Promise<{ rows: FunctionSummary[]; total: number }> {
    const query = this.db
      .createQueryBuilder(FunctionEntity, 'f')
      .select([
        'f.id',
        'f.workspaceSlug',
        'f.name',
        'f.description',
        'f.version',
        'f.codeHash',
        'f.createdBy',
        'f.updatedBy',
        'f.createdAt',
        'f.updatedAt',
      ])
      .where('f.workspace_slug = :workspace AND f.deleted_at IS NULL', { workspace: scope.workspace });
    return pageOf(query, q, { search: SEARCH_COLUMNS, sort: SORT_COLUMNS, id: 'f.id' });
  }

  /** Applies `changes` to a function locked in `tx` and records the new version. */
  async update(
    scope: WorkspaceScope,
    tx: Tx,
    current: FunctionEntity,
    changes: FunctionChanges,
    by: string,
    now: Date,
  ): Promise<FunctionEntity> {
    const manager = managerOf(this.db, tx);
    const next: FunctionEntity = manager.create(FunctionEntity, {
      ...current,
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.code !== undefined ? { code: changes.code, codeHash: changes.codeHash ?? current.codeHash } : {}),
      version: current.version + 1,
      updatedBy: by,
      updatedAt: now,
    });
    await manager
      .createQueryBuilder()
      .update(FunctionEntity)
      .set({
        name: next.name,
        description: next.description,
        code: next.code,
        codeHash: next.codeHash,
        version: next.version,
        updatedBy: by,
        updatedAt: now,
      })
      .where('workspace_slug = :workspace AND id = :id', { workspace: scope.workspace, id: current.id })
      .execute();
    await this.recordVersion(next, tx);
    return next;
  }

  /** Marks the function deleted (its versions and runs stay for audit); whether it was live. */
  async softDelete(scope: WorkspaceScope, tx: Tx, id: string, by: string, now: Date): Promise<boolean> {
    // FOR UPDATE first: it waits for the run inserts in flight (each holds the row FOR KEY SHARE) and
    // holds back new ones until the delete commits, so its caller's cancellation of queued runs misses
    // none (migration 1764950000000).
    await managerOf(this.db, tx).query(
      'SELECT id FROM compute.functions WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE',
      [scope.workspace, id],
    );
    const result = await managerOf(this.db, tx)
      .createQueryBuilder()
      .update(FunctionEntity)
      .set({ deletedAt: now, updatedBy: by, updatedAt: now })
      .where('workspace_slug = :workspace AND id = :id AND deleted_at IS NULL', { workspace: scope.workspace, id })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Every version of a live function, newest first, without code. */
  versions(scope: WorkspaceScope, functionId: string): Promise<Omit<FunctionVersionEntity, 'code'>[]> {
    return this.db
      .createQueryBuilder(FunctionVersionEntity, 'v')
      .select(['v.functionId', 'v.version', 'v.name', 'v.description', 'v.codeHash', 'v.createdBy', 'v.createdAt'])
      .where('v.workspace_slug = :workspace AND v.function_id = :functionId', {
        workspace: scope.workspace,
        functionId,
      })
      .orderBy('v.version', 'DESC')
      .getMany();
  }

  /** One version with its code. */
  async version(
    scope: WorkspaceScope,
    functionId: string,
    version: number,
  ): Promise<FunctionVersionEntity | undefined> {
    const row = await this.db
      .createQueryBuilder(FunctionVersionEntity, 'v')
      .where('v.workspace_slug = :workspace AND v.function_id = :functionId AND v.version = :version', {
        workspace: scope.workspace,
        functionId,
        version,
      })
      .getOne();
    return row ?? undefined;
  }

  private async recordVersion(f: FunctionEntity, tx: Tx): Promise<void> {
    await managerOf(this.db, tx).insert(FunctionVersionEntity, {
      functionId: f.id,
      version: f.version,
      workspaceSlug: f.workspaceSlug,
      name: f.name,
      description: f.description,
      code: f.code,
      codeHash: f.codeHash,
      createdBy: f.updatedBy,
      createdAt: f.updatedAt,
    });
  }
}
