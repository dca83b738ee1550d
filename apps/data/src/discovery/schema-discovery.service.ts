import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { ErrorCode, type Collection } from '@strata/contracts';
import { rowsOf } from '@strata/db';
import { StrataException } from '@strata/platform';
import { CollectionsService } from '../collections/collections.service.js';
import { findCollection } from '../records/collection-lookup.js';
import { RecordSecrets } from '../records/record-secrets.js';
import type { UpdateDiscoverySettingsRequest } from './dto/discovery.requests.js';
import {
  SuggestionsStore,
  toSuggestion,
  type Suggestion,
  type SuggestionRow,
  type SuggestionStatus,
} from './suggestions.store.js';

/** Most records one `trigger` reads (in pages of batchSize). */
export const TRIGGER_MAX_RECORDS = 100_000;

/**
 * Schema discovery for auto-evolving and schemaless collections: settings,
 * `scan` (the newest `batchSize` records), `trigger` (every record, page by
 * page), and the suggestions they produce, which a person accepts (the
 * property joins the collection, validated like any change) or rejects.
 */
@Injectable()
export class SchemaDiscoveryService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly collections: CollectionsService,
    private readonly store: SuggestionsStore,
    private readonly secrets: RecordSecrets,
  ) {}

  async settings(workspace: string, slug: string) {
    return settingsOf(await findCollection(this.db.manager, workspace, { slug }));
  }

  async updateSettings(workspace: string, slug: string, actor: string, body: UpdateDiscoverySettingsRequest) {
    const c = await findCollection(this.db.manager, workspace, { slug });
    return settingsOf(await this.collections.update(workspace, c.id, actor, body));
  }

  async scan(workspace: string, slug: string, everything: boolean) {
    return this.db.transaction(async (tx) => {
      const c = await findCollection(tx, workspace, { slug }, true);
      if (c.schemaDiscoveryMode === 'strict') {
        throw StrataException.conflict(
          `Collection '${slug}' is strict: schema discovery applies to auto-evolving and schemaless collections`,
        );
      }
      const page = c.schemaDiscoveryConfig.batchSize;
      const limit = everything ? TRIGGER_MAX_RECORDS : page;
      let scanned = 0;
      for (let offset = 0; offset < limit; offset += page) {
        const rows = await tx.query<{ data: Record<string, unknown> }[]>(
          `SELECT data FROM data.records WHERE collection_id = $1 AND deleted_at IS NULL
            ORDER BY updated_at DESC, id LIMIT $2 OFFSET $3`,
          [c.id, Math.min(page, limit - offset), offset],
        );
        // Discovery samples fields the collection does not define: secrets (and envelopes a removed
        // secret field left behind) are masked, never decrypted into a suggestion's sampleValue.
        for (const row of rows) await this.store.observe(tx, c, this.secrets.mask(c.properties, row.data));
        scanned += rows.length;
        if (rows.length < page) break;
      }
      return { recordSlug: c.recordSlug, scanned, suggestions: await this.store.list(tx, c.id, 'pending') };
    });
  }

  async suggestions(workspace: string, slug: string, status: SuggestionStatus | undefined): Promise<Suggestion[]> {
    const c = await findCollection(this.db.manager, workspace, { slug });
    return this.store.list(this.db.manager, c.id, status);
  }

  /** Adds the suggested property to the collection and marks the suggestion accepted, in one transaction. */
  async accept(workspace: string, slug: string, id: string, actor: string) {
    return this.db.transaction(async (tx) => {
      const c = await findCollection(tx, workspace, { slug });
      const row = await this.pending(tx, c, id);
      const collection = await this.collections.update(
        workspace,
        c.id,
        actor,
        { properties: [...c.properties, row.property] },
        tx,
      );
      return { suggestion: await this.decide(tx, id, 'accepted', actor), collection };
    });
  }

  async reject(workspace: string, slug: string, id: string, actor: string): Promise<Suggestion> {
    return this.db.transaction(async (tx) => {
      const c = await findCollection(tx, workspace, { slug });
      await this.pending(tx, c, id);
      return this.decide(tx, id, 'rejected', actor);
    });
  }

  private async pending(tx: EntityManager, c: Collection, id: string): Promise<SuggestionRow> {
    const [row] = await tx.query<SuggestionRow[]>(
      'SELECT * FROM data.schema_suggestions WHERE id = $1 AND collection_id = $2 FOR UPDATE',
      [id, c.id],
    );
    if (!row) throw StrataException.notFound(`Suggestion ${id} not found`, ErrorCode.NOT_FOUND);
    if (row.status !== 'pending') throw StrataException.conflict(`Suggestion ${id} is already ${row.status}`);
    return row;
  }

  private async decide(tx: EntityManager, id: string, status: SuggestionStatus, actor: string): Promise<Suggestion> {
    const rows = rowsOf<SuggestionRow>(
      await tx.query(
        `UPDATE data.schema_suggestions SET status = $2, decided_by = $3, decided_at = now(), updated_at = now()
          WHERE id = $1 RETURNING *`,
        [id, status, actor],
      ),
    );
    return toSuggestion(rows[0]!);
  }
}

function settingsOf(c: Collection) {
  return {
    recordSlug: c.recordSlug,
    schemaDiscoveryMode: c.schemaDiscoveryMode,
    schemaDiscoveryConfig: c.schemaDiscoveryConfig,
  };
}
