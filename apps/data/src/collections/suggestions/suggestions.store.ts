import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Collection } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isPlainObject } from '../../schema/issues.js';
import { inferProperty, type ProposedProperty } from './infer-property.js';

export type SuggestionStatus = 'pending' | 'accepted' | 'rejected';

export interface SuggestionRow {
  id: string;
  collection_id: string;
  field: string;
  property: ProposedProperty;
  sample: string | null;
  occurrences: number;
  status: SuggestionStatus;
  created_at: Date;
  updated_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
}

export interface Suggestion {
  id: string;
  structureId: string;
  field: string;
  suggestedProperty: ProposedProperty;
  sampleValue: string | null;
  occurrences: number;
  status: SuggestionStatus;
  createdAt: string;
  updatedAt: string;
  decidedBy?: string;
  decidedAt?: string;
}

export function toSuggestion(row: SuggestionRow): Suggestion {
  return {
    id: row.id,
    structureId: row.collection_id,
    field: row.field,
    suggestedProperty: row.property,
    sampleValue: row.sample,
    occurrences: row.occurrences,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.decided_by ? { decidedBy: row.decided_by } : {}),
    ...(row.decided_at ? { decidedAt: row.decided_at.toISOString() } : {}),
  };
}

/**
 * Records what discovery sees: for each top-level field a collection does not
 * define, one suggestion (the first proposal is kept, later sightings count as
 * occurrences). A rejected field is never proposed again; its sightings still count.
 */
@Injectable()
export class SuggestionsStore {
  async observe(
    tx: EntityManager,
    c: Pick<Collection, 'id' | 'properties' | 'schemaDiscoveryConfig'>,
    data: Record<string, unknown>,
  ): Promise<number> {
    if (!isPlainObject(data)) return 0;
    const known = new Set(c.properties.map((p) => p.name));
    const unknown = Object.keys(data)
      .filter((k) => !known.has(k) && !k.startsWith('_'))
      .slice(0, c.schemaDiscoveryConfig.maxKeysPerRecord);
    let observed = 0;
    for (const field of unknown) {
      const property = inferProperty(field, data[field], c.schemaDiscoveryConfig);
      if (!property) continue;
      const sample = JSON.stringify(data[field]).slice(0, c.schemaDiscoveryConfig.maxStringLengthSampled);
      await tx.query(
        `INSERT INTO data.schema_suggestions (id, collection_id, field, property, sample) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (collection_id, field)
         DO UPDATE SET occurrences = data.schema_suggestions.occurrences + 1, updated_at = now()`,
        [newUuid(), c.id, field, JSON.stringify(property), sample],
      );
      observed++;
    }
    return observed;
  }

  async list(db: EntityManager, collectionId: string, status: SuggestionStatus | undefined): Promise<Suggestion[]> {
    const rows = await db.query<SuggestionRow[]>(
      `SELECT * FROM data.schema_suggestions WHERE collection_id = $1 AND ($2::text IS NULL OR status = $2)
        ORDER BY occurrences DESC, created_at, id`,
      [collectionId, status ?? null],
    );
    return rows.map(toSuggestion);
  }
}
