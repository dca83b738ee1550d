import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { rowsOf } from '@strata/db';

/**
 * What retention deletes of the OIDC provider's state (`iam.oidc_payloads`) and of the
 * workspaces chosen at login (`iam.login_workspaces`): the provider's own records, keyed
 * by its identifiers, not data of a workspace. Each statement picks its rows
 * `FOR UPDATE SKIP LOCKED`: sweepers on several replicas share them and never wait.
 */
@Injectable()
export class OidcRetentionRepository {
  constructor(private readonly db: DataSource) {}

  /** Up to `limit` payloads that expired before `before`; how many went. */
  async deleteExpiredPayloads(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `DELETE FROM iam.oidc_payloads WHERE (kind, id) IN (
           SELECT kind, id FROM iam.oidc_payloads WHERE expires_at < $1
            ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [before, limit],
      ),
    );
    return rows.length;
  }

  /**
   * Up to `limit` login workspaces chosen before `before` whose grant is no longer stored
   * (it expired and was deleted, or was revoked): no token can be issued from it again, so
   * nothing will ask for its workspace. How many went.
   */
  async deleteOrphanLoginWorkspaces(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ grant_id: string }>(
      await this.db.query(
        `DELETE FROM iam.login_workspaces WHERE grant_id IN (
           SELECT l.grant_id FROM iam.login_workspaces l
            WHERE l.created_at < $1
              AND NOT EXISTS (SELECT 1 FROM iam.oidc_payloads p WHERE p.kind = 'Grant' AND p.id = l.grant_id)
            ORDER BY l.created_at LIMIT $2 FOR UPDATE OF l SKIP LOCKED)
         RETURNING grant_id`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
