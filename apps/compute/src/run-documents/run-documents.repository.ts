import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rowsOf, type WorkspaceScope } from '@strata/db';
import { RunDocumentEntity } from './run-document.entity.js';

export interface NewRunDocument {
  readonly id: string;
  readonly runId: string;
  readonly name: string;
  readonly sealed: string;
  readonly sizeBytes: number;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/** compute.run_documents within one workspace; a document is written only beside its own run's row. */
@Injectable()
export class RunDocumentsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Stores a document of a run of the workspace, unless the run holds `maxCount`
   * documents or `maxBytes` of them already. The run's row is locked first, so
   * that calls of one run at once are counted one after another: checked in one
   * statement alone, two concurrent calls each saw the other's bytes missing and
   * both were stored past the cap.
   */
  async insert(
    scope: WorkspaceScope,
    d: NewRunDocument,
    caps: { maxCount: number; maxBytes: number },
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const run = await tx.query<{ id: string }[]>(
        `SELECT id FROM compute.runs WHERE workspace_slug = $1 AND id = $2 FOR NO KEY UPDATE`,
        [scope.workspace, d.runId],
      );
      if (run.length === 0) return false;
      // A statement of its own: it sees every document committed while this one waited for the lock.
      const rows = await tx.query<{ id: string }[]>(
        `INSERT INTO compute.run_documents (id, workspace_slug, run_id, name, content, size_bytes, created_at, expires_at)
         SELECT $2, $1, $3, $4, $5, $6::integer, $7, $8
          WHERE (SELECT count(*) FROM compute.run_documents WHERE workspace_slug = $1 AND run_id = $3) < $9
            AND (SELECT coalesce(sum(size_bytes), 0) FROM compute.run_documents WHERE workspace_slug = $1 AND run_id = $3) + $6::integer <= $10
         RETURNING id`,
        [
          scope.workspace,
          d.id,
          d.runId,
          d.name,
          d.sealed,
          d.sizeBytes,
          d.createdAt,
          d.expiresAt,
          caps.maxCount,
          caps.maxBytes,
        ],
      );
      return rows.length > 0;
    });
  }

  /** The run's live documents without their content, oldest first. */
  list(scope: WorkspaceScope, runId: string, now: Date): Promise<Omit<RunDocumentEntity, 'content'>[]> {
    return this.db
      .createQueryBuilder(RunDocumentEntity, 'd')
      .select(['d.id', 'd.workspaceSlug', 'd.runId', 'd.name', 'd.sizeBytes', 'd.createdAt', 'd.expiresAt'])
      .where('d.workspace_slug = :workspace AND d.run_id = :runId AND d.expires_at > :now', {
        workspace: scope.workspace,
        runId,
        now,
      })
      .orderBy('d.created_at', 'ASC')
      .addOrderBy('d.id', 'ASC')
      .getMany();
  }

  async find(scope: WorkspaceScope, runId: string, id: string, now: Date): Promise<RunDocumentEntity | undefined> {
    const row = await this.db
      .createQueryBuilder(RunDocumentEntity, 'd')
      .where('d.workspace_slug = :workspace AND d.run_id = :runId AND d.id = :id AND d.expires_at > :now', {
        workspace: scope.workspace,
        runId,
        id,
        now,
      })
      .getOne();
    return row ?? undefined;
  }

  /** System (every workspace): deletes up to `limit` expired documents; how many. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `DELETE FROM compute.run_documents WHERE id IN (
           SELECT id FROM compute.run_documents WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
         ) RETURNING id`,
        [now, limit],
      ),
    );
    return rows.length;
  }
}
