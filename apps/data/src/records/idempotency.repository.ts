import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

export interface StoredIdempotentResponse<T> {
  readonly request_hash: string;
  readonly status: number;
  readonly response: T;
}

/** data.idempotency_keys: the first response to each Idempotency-Key of a workspace. */
@Injectable()
export class IdempotencyRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Makes concurrent requests with the same key wait for the first one's transaction. */
  async lock(scope: WorkspaceScope, tx: Tx, key: string): Promise<void> {
    await managerOf(this.db, tx).query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `data-idempotency:${scope.workspace}:${key}`,
    ]);
  }

  async find<T>(
    scope: WorkspaceScope,
    tx: Tx,
    key: string,
    windowHours: number,
  ): Promise<StoredIdempotentResponse<T> | undefined> {
    // `response_exact` (json) keeps the response's text, key order included; older rows have only `response`.
    const [stored] = await managerOf(this.db, tx).query<StoredIdempotentResponse<T>[]>(
      `SELECT request_hash, status, COALESCE(response_exact, response::json) AS response FROM data.idempotency_keys
        WHERE workspace_slug = $1 AND key = $2 AND created_at > now() - make_interval(hours => $3)`,
      [scope.workspace, key, windowHours],
    );
    return stored;
  }

  async store(
    scope: WorkspaceScope,
    tx: Tx,
    key: string,
    requestHash: string,
    status: number,
    response: unknown,
  ): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO data.idempotency_keys (workspace_slug, key, request_hash, status, response, response_exact)
       VALUES ($1, $2, $3, $4, $5::text::jsonb, $5::text::json)
       ON CONFLICT (workspace_slug, key)
       DO UPDATE SET request_hash = $3, status = $4, response = $5::text::jsonb, response_exact = $5::text::json, created_at = now()`,
      [scope.workspace, key, requestHash, status, JSON.stringify(response)],
    );
  }
}
