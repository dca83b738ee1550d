import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import { EndpointCredentialsEntity } from './endpoint-credentials.entity.js';

/** A credential to store (`null` removes it; absent leaves it as it is). */
export interface CredentialChanges {
  readonly apiKey?: { readonly hash: string; readonly last4: string } | null;
  readonly signingSecret?: { readonly sealed: string; readonly keyVersion: number } | null;
}

/** compute.endpoint_credentials within one workspace. */
@Injectable()
export class EndpointCredentialsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async find(scope: WorkspaceScope, triggerId: string, tx?: Tx): Promise<EndpointCredentialsEntity | undefined> {
    const row = await managerOf(this.db, tx)
      .createQueryBuilder(EndpointCredentialsEntity, 'c')
      .where('c.workspace_slug = :workspace AND c.trigger_id = :triggerId', { workspace: scope.workspace, triggerId })
      .getOne();
    return row ?? undefined;
  }

  /** Applies the changes in `tx`, creating the row on first use. */
  async change(scope: WorkspaceScope, tx: Tx, triggerId: string, c: CredentialChanges, now: Date): Promise<void> {
    const manager = managerOf(this.db, tx);
    await manager.query(
      `INSERT INTO compute.endpoint_credentials (trigger_id, workspace_slug)
       SELECT t.id, t.workspace_slug FROM compute.triggers t WHERE t.workspace_slug = $1 AND t.id = $2
       ON CONFLICT (trigger_id) DO NOTHING`,
      [scope.workspace, triggerId],
    );
    const set: Partial<EndpointCredentialsEntity> = {};
    if (c.apiKey !== undefined) {
      set.apiKeyHash = c.apiKey?.hash ?? null;
      set.apiKeyLast4 = c.apiKey?.last4 ?? null;
      set.apiKeyCreatedAt = c.apiKey ? now : null;
    }
    if (c.signingSecret !== undefined) {
      set.signingSecret = c.signingSecret?.sealed ?? null;
      set.signingSecretKeyVersion = c.signingSecret?.keyVersion ?? null;
      set.signingSecretCreatedAt = c.signingSecret ? now : null;
    }
    if (Object.keys(set).length === 0) return;
    await manager
      .createQueryBuilder()
      .update(EndpointCredentialsEntity)
      .set(set)
      .where('workspace_slug = :workspace AND trigger_id = :triggerId', { workspace: scope.workspace, triggerId })
      .execute();
  }
}
