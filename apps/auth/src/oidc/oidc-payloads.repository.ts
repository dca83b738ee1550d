import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { isStorableId } from './oauth-input.js';

/** Looks up a service account as an OAuth client (client-credentials only). */
export type ClientLookup = (clientId: string) => Promise<AdapterPayload | undefined>;

/**
 * oidc-provider's storage in `iam.oidc_payloads`: sessions, interactions,
 * grants, authorization codes, refresh tokens. JWT access tokens are not
 * stored. Clients come from the service-accounts table. The provider's own
 * state, keyed by its identifiers: not data of a workspace.
 */
@Injectable()
export class OidcPayloadsRepository {
  constructor(private readonly db: DataSource) {}

  /** The adapter class oidc-provider instantiates per model. */
  adapter(findClient: ClientLookup): new (model: string) => Adapter {
    return postgresAdapter(this.db, findClient);
  }
}

function postgresAdapter(db: DataSource, findClient: ClientLookup): new (model: string) => Adapter {
  return class PostgresAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      await db.query(
        `INSERT INTO iam.oidc_payloads (kind, id, payload, grant_id, uid, user_code, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
           uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`,
        [this.model, id, payload, payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresAt],
      );
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      // A client id from a Basic header or a form can hold NUL: nothing stored has it.
      if (!isStorableId(id)) return undefined;
      if (this.model === 'Client') return findClient(id);
      return this.one('id = $2', id);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.one('uid = $2', uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.one('user_code = $2', userCode);
    }

    async consume(id: string): Promise<void> {
      await db.query('UPDATE iam.oidc_payloads SET consumed_at = now() WHERE kind = $1 AND id = $2', [this.model, id]);
    }

    async destroy(id: string): Promise<void> {
      await db.query('DELETE FROM iam.oidc_payloads WHERE kind = $1 AND id = $2', [this.model, id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.query('DELETE FROM iam.oidc_payloads WHERE grant_id = $1', [grantId]);
    }

    private async one(where: string, value: string): Promise<AdapterPayload | undefined> {
      if (!isStorableId(value)) return undefined;
      const rows: { payload: AdapterPayload; consumed_at: Date | null }[] = await db.query(
        `SELECT payload, consumed_at FROM iam.oidc_payloads
          WHERE kind = $1 AND ${where} AND (expires_at IS NULL OR expires_at > now())`,
        [this.model, value],
      );
      const row = rows[0];
      if (!row) return undefined;
      return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
    }
  };
}
