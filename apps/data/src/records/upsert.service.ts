import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Collection } from '@strata/contracts';
import { StrataException, type Grants } from '@strata/platform';
import { at, Issues } from '../schema/issues.js';
import { canonicalJson } from '../schema/value-check.js';
import { findCollection } from './collection-lookup.js';
import type { UpsertRecordRequest } from './dto/upsert.requests.js';
import { Idempotency, type StoredResponse } from './idempotency.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordSecrets } from './record-secrets.js';
import { validateForWrite } from './record-validation.js';
import { RecordWriter } from './record-writer.js';
import type { RecordRow } from './record.types.js';

export interface UpsertResult {
  data: { id: string; data: Record<string, unknown>; version: number; createdAt?: string; updatedAt?: string };
  operation: 'created' | 'updated';
}

/**
 * `POST /records/slug/{structureSlug}/upsert`: find the record whose data holds
 * every `match` value (JSON containment: type-strict, null matches JSON null);
 * create it with the match merged into data, or update it with the match keys
 * removed from data. Calls with the same match are serialised by an advisory
 * lock, so concurrent upserts make one record and update it.
 */
@Injectable()
export class UpsertService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly writer: RecordWriter,
    private readonly secrets: RecordSecrets,
    private readonly presenter: RecordPresenter,
    private readonly idempotency: Idempotency,
  ) {}

  async upsert(
    workspace: string,
    slug: string,
    actor: string,
    grants: Grants,
    body: UpsertRecordRequest,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse<UpsertResult>> {
    return this.db.transaction(async (tx) => {
      const c = await findCollection(tx, workspace, { slug }, true);
      checkMatch(c, body.match);
      const masked = (result: UpsertResult): UpsertResult => ({
        ...result,
        data: { ...result.data, data: this.secrets.mask(c.properties, result.data.data) },
      });
      return this.idempotency.run<UpsertResult>(
        tx,
        workspace,
        idempotencyKey,
        { slug, ...body },
        async () => {
          await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
            `data-upsert:${c.id}:${canonicalJson(body.match)}`,
          ]);
          const rows = await tx.query<RecordRow[]>(
            `SELECT r.*, c.record_slug FROM data.records r JOIN data.collections c ON c.id = r.collection_id
            WHERE r.collection_id = $1 AND r.deleted_at IS NULL AND r.data @> $2::jsonb
            ORDER BY r.created_at, r.id LIMIT 2 FOR UPDATE OF r`,
            [c.id, JSON.stringify(body.match)],
          );
          if (rows.length > 1)
            throw StrataException.conflict('match is ambiguous: more than one record holds these values');
          const current = rows[0];
          if (!current) {
            const data = await validateForWrite(tx, c, 'create', { ...body.data, ...body.match }, undefined);
            const row = await this.writer.create(tx, c, data, actor, { emit: true });
            const shown = await this.presenter.data(c, row.id, row.data, grants);
            return {
              status: 201,
              body: {
                data: { id: row.id, data: shown, version: row.version, createdAt: row.created_at.toISOString() },
                operation: 'created' as const,
              },
            };
          }
          const changes = Object.fromEntries(Object.entries(body.data).filter(([k]) => !(k in body.match)));
          const previous = this.secrets.open(c, current.id, current.data);
          const data = await validateForWrite(tx, c, 'patch', changes, previous);
          const row = await this.writer.update(tx, c, current, data, actor, { action: 'update', emit: true });
          const shown = await this.presenter.data(c, row.id, row.data, grants);
          return {
            status: 200,
            body: {
              data: { id: row.id, data: shown, version: row.version, updatedAt: row.updated_at.toISOString() },
              operation: 'updated' as const,
            },
          };
        },
        masked,
      );
    });
  }
}

/** match: at least one field, primitive values, fields the collection can hold, never a secret. */
function checkMatch(c: Collection, match: Record<string, unknown>): void {
  const issues = new Issues();
  const byName = new Map(c.properties.map((p) => [p.name, p]));
  if (Object.keys(match).length === 0) issues.add('match', 'must name at least one field');
  for (const [key, value] of Object.entries(match)) {
    const field = at('match', key);
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
      issues.add(field, 'must be a string, number, boolean or null');
    }
    const property = byName.get(key);
    if (!property && c.schemaDiscoveryMode === 'strict') issues.add(field, 'is not a property of this collection');
    if (property?.type === 'string' && property.isSecret) issues.add(field, 'cannot match on a secret field');
  }
  if (issues.count) throw StrataException.validation([...issues.list]);
}
