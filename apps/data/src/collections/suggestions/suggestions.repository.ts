import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ErrorCode, type Collection } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
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
 * data.schema_suggestions. What discovery sees: for each top-level field a
 * collection does not define, one suggestion (the first proposal is kept,
 * later sightings count as occurrences). A rejected field is never proposed
 * again; its sightings still count. Suggestions have no workspace column of
 * their own: every statement joins them to their collection in the scope's
 * workspace.
 */
@Injectable()
export class SuggestionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async observe(
    scope: WorkspaceScope,
    tx: Tx | undefined,
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
      await managerOf(this.db, tx).query(
        `INSERT INTO data.schema_suggestions (id, collection_id, field, property, sample)
         SELECT $1, c.id, $3, $4, $5 FROM data.collections c WHERE c.id = $2 AND c.workspace_slug = $6
         ON CONFLICT (collection_id, field)
         DO UPDATE SET occurrences = data.schema_suggestions.occurrences + 1, updated_at = now()`,
        [newUuid(), c.id, field, JSON.stringify(property), sample, scope.workspace],
      );
      observed++;
    }
    return observed;
  }

  async list(
    scope: WorkspaceScope,
    collectionId: string,
    status: SuggestionStatus | undefined,
    tx?: Tx,
  ): Promise<Suggestion[]> {
    const rows = await managerOf(this.db, tx).query<SuggestionRow[]>(
      `SELECT s.* FROM data.schema_suggestions s JOIN data.collections c ON c.id = s.collection_id
        WHERE c.workspace_slug = $1 AND s.collection_id = $2 AND ($3::text IS NULL OR s.status = $3)
        ORDER BY s.occurrences DESC, s.created_at, s.id`,
      [scope.workspace, collectionId, status ?? null],
    );
    return rows.map(toSuggestion);
  }

  /** A pending suggestion of the collection, locked for its decision; 404 or 409 otherwise. */
  async pending(scope: WorkspaceScope, tx: Tx, collectionId: string, id: string): Promise<SuggestionRow> {
    const [row] = await managerOf(this.db, tx).query<SuggestionRow[]>(
      `SELECT s.* FROM data.schema_suggestions s JOIN data.collections c ON c.id = s.collection_id
        WHERE c.workspace_slug = $1 AND s.id = $2 AND s.collection_id = $3 FOR UPDATE OF s`,
      [scope.workspace, id, collectionId],
    );
    if (!row) throw StrataException.notFound(`Suggestion ${id} not found`, ErrorCode.NOT_FOUND);
    if (row.status !== 'pending') throw StrataException.conflict(`Suggestion ${id} is already ${row.status}`);
    return row;
  }

  async decide(
    scope: WorkspaceScope,
    tx: Tx,
    id: string,
    status: SuggestionStatus,
    actor: string,
  ): Promise<Suggestion> {
    const rows = rowsOf<SuggestionRow>(
      await managerOf(this.db, tx).query(
        `UPDATE data.schema_suggestions s SET status = $3, decided_by = $4, decided_at = now(), updated_at = now()
           FROM data.collections c
          WHERE c.id = s.collection_id AND c.workspace_slug = $1 AND s.id = $2 RETURNING s.*`,
        [scope.workspace, id, status, actor],
      ),
    );
    if (!rows[0]) throw StrataException.notFound(`Suggestion ${id} not found`, ErrorCode.NOT_FOUND);
    return toSuggestion(rows[0]);
  }
}
