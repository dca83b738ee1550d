import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { at, Issues } from '../schema/issues.js';
import { canonicalJson } from '../schema/value-check.js';
import type { UpsertRecordRequest } from './dto/upsert.requests.js';
import { Idempotency, type StoredResponse } from './idempotency.js';
import { refuseInactive } from './inactive-collection.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordSecrets } from '../secrets/record-secrets.js';
import { RecordValidator } from './record-validation.js';
import { RecordWriter } from './record-writer.js';
import { RecordsRepository } from './records.repository.js';
import { requireCollection } from './collection-access.js';
import { bytesOf, RecordQuota } from '../usage/record-quota.js';

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
    private readonly transactions: Transactions,
    private readonly records: RecordsRepository,
    private readonly collections: CollectionsRepository,
    private readonly validator: RecordValidator,
    private readonly writer: RecordWriter,
    private readonly secrets: RecordSecrets,
    private readonly presenter: RecordPresenter,
    private readonly idempotency: Idempotency,
    private readonly quota: RecordQuota,
  ) {}

  async upsert(
    scope: WorkspaceScope,
    slug: string,
    actor: string,
    grants: Grants,
    body: UpsertRecordRequest,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse<UpsertResult>> {
    return this.transactions.run(async (tx) => {
      const c = await this.collections.find(scope, { slug }, { tx, lock: true });
      refuseInactive(c);
      // An upsert may create or update: it needs both on this collection, as on the route.
      requireCollection(grants, 'create', c, { slug });
      requireCollection(grants, 'update', c, { slug });
      checkMatch(c, body.match);
      const masked = (result: UpsertResult): UpsertResult => ({
        ...result,
        data: { ...result.data, data: this.secrets.mask(c.properties, result.data.data) },
      });
      return this.idempotency.run<UpsertResult>(
        scope,
        tx,
        idempotencyKey,
        { slug, ...body },
        async () => {
          await this.records.lock(scope, tx, `upsert:${c.id}:${canonicalJson(body.match)}`);
          const rows = await this.records.findByMatch(scope, tx, c.id, body.match);
          if (rows.length > 1)
            throw StrataException.conflict('match is ambiguous: more than one record holds these values');
          const current = rows[0];
          if (!current) {
            const input = { ...body.data, ...body.match };
            await this.quota.ensureRoom(scope, 1, bytesOf([input]), tx);
            const data = await this.validator.forWrite(scope, tx, c, 'create', input, undefined);
            const row = await this.writer.create(scope, tx, c, data, actor, { emit: true });
            const shown = await this.presenter.data(c, row.id, row.data, grants);
            return {
              status: 201,
              body: {
                data: { id: row.id, data: shown, version: row.version, createdAt: row.created_at.toISOString() },
                operation: 'created' as const,
              },
            };
          }
          const changes = Object.fromEntries(Object.entries(body.data).filter(([k]) => !Object.hasOwn(body.match, k)));
          const previous = this.secrets.open(c, current.id, current.data);
          const data = await this.validator.forWrite(scope, tx, c, 'patch', changes, previous);
          const row = await this.writer.update(scope, tx, c, current, data, actor, { action: 'update', emit: true });
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
