import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';

export interface StoredAnswer<T> {
  readonly request_hash: string;
  readonly status: number;
  readonly response: T;
}

/** storage.idempotency_keys: the first answer to each upload's Idempotency-Key of a workspace. */
@Injectable()
export class IdempotencyRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Makes concurrent requests with the same key wait for the first one's transaction. */
  async lock(scope: WorkspaceScope, tx: Tx, key: string): Promise<void> {
    await managerOf(this.db, tx).query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `storage-idempotency:${scope.workspace}:${key}`,
    ]);
  }

  async find<T>(scope: WorkspaceScope, tx: Tx, key: string, windowHours: number): Promise<StoredAnswer<T> | undefined> {
    const [stored] = rowsOf<StoredAnswer<T>>(
      await managerOf(this.db, tx).query(
        `SELECT request_hash, status, response FROM storage.idempotency_keys
          WHERE workspace_slug = $1 AND key = $2 AND created_at > now() - make_interval(hours => $3)`,
        [scope.workspace, key, windowHours],
      ),
    );
    return stored;
  }

  async store(
    scope: WorkspaceScope,
    tx: Tx,
    key: string,
    hash: string,
    status: number,
    response: unknown,
  ): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO storage.idempotency_keys (workspace_slug, key, request_hash, status, response)
       VALUES ($1, $2, $3, $4, $5::text::json)
       ON CONFLICT (workspace_slug, key)
       DO UPDATE SET request_hash = $3, status = $4, response = $5::text::json, created_at = now()`,
      [scope.workspace, key, hash, status, JSON.stringify(response)],
    );
  }
}
