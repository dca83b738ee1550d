import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { CollectionsService } from '../collections/collections.service.js';
import {
  SuggestionsRepository,
  type Suggestion,
  type SuggestionStatus,
} from '../collections/suggestions/suggestions.repository.js';
import { RecordSecrets } from '../secrets/record-secrets.js';
import { RecordsRepository } from '../records/records.repository.js';
import type { UpdateDiscoverySettingsRequest } from './dto/discovery.requests.js';

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
    private readonly transactions: Transactions,
    private readonly collectionsOfScope: CollectionsRepository,
    private readonly collections: CollectionsService,
    private readonly records: RecordsRepository,
    private readonly suggestionsOfScope: SuggestionsRepository,
    private readonly secrets: RecordSecrets,
  ) {}

  async settings(scope: WorkspaceScope, slug: string) {
    return settingsOf(await this.collectionsOfScope.find(scope, { slug }));
  }

  async updateSettings(scope: WorkspaceScope, slug: string, actor: string, body: UpdateDiscoverySettingsRequest) {
    const c = await this.collectionsOfScope.find(scope, { slug });
    return settingsOf(await this.collections.update(scope, c.id, actor, body));
  }

  async scan(scope: WorkspaceScope, slug: string, everything: boolean) {
    return this.transactions.run(async (tx) => {
      const c = await this.collectionsOfScope.find(scope, { slug }, { tx, lock: true });
      if (c.schemaDiscoveryMode === 'strict') {
        throw StrataException.conflict(
          `Collection '${slug}' is strict: schema discovery applies to auto-evolving and schemaless collections`,
        );
      }
      const page = c.schemaDiscoveryConfig.batchSize;
      const limit = everything ? TRIGGER_MAX_RECORDS : page;
      let scanned = 0;
      for (let offset = 0; offset < limit; offset += page) {
        const datas = await this.records.recentData(scope, tx, c.id, Math.min(page, limit - offset), offset);
        // Discovery samples fields the collection does not define: secrets (and envelopes a removed
        // secret field left behind) are masked, never decrypted into a suggestion's sampleValue.
        for (const data of datas) {
          await this.suggestionsOfScope.observe(scope, tx, c, this.secrets.mask(c.properties, data));
        }
        scanned += datas.length;
        if (datas.length < page) break;
      }
      return {
        recordSlug: c.recordSlug,
        scanned,
        suggestions: await this.suggestionsOfScope.list(scope, c.id, 'pending', tx),
      };
    });
  }

  async suggestions(scope: WorkspaceScope, slug: string, status: SuggestionStatus | undefined): Promise<Suggestion[]> {
    const c = await this.collectionsOfScope.find(scope, { slug });
    return this.suggestionsOfScope.list(scope, c.id, status);
  }

  /** Adds the suggested property to the collection and marks the suggestion accepted, in one transaction. */
  async accept(scope: WorkspaceScope, slug: string, id: string, actor: string) {
    return this.transactions.run(async (tx) => {
      const c = await this.collectionsOfScope.find(scope, { slug }, { tx });
      const row = await this.suggestionsOfScope.pending(scope, tx, c.id, id);
      const collection = await this.collections.update(
        scope,
        c.id,
        actor,
        { properties: [...c.properties, row.property] },
        tx,
      );
      return { suggestion: await this.suggestionsOfScope.decide(scope, tx, id, 'accepted', actor), collection };
    });
  }

  async reject(scope: WorkspaceScope, slug: string, id: string, actor: string): Promise<Suggestion> {
    return this.transactions.run(async (tx) => {
      const c = await this.collectionsOfScope.find(scope, { slug }, { tx });
      await this.suggestionsOfScope.pending(scope, tx, c.id, id);
      return this.suggestionsOfScope.decide(scope, tx, id, 'rejected', actor);
    });
  }
}

function settingsOf(c: Collection) {
  return {
    recordSlug: c.recordSlug,
    schemaDiscoveryMode: c.schemaDiscoveryMode,
    schemaDiscoveryConfig: c.schemaDiscoveryConfig,
  };
}
