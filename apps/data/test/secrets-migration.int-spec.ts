import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { KeyRing } from '@strata/crypto';
import { DataSource } from 'typeorm';
import { migrateService } from '@strata/db';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { DATA_SCHEMA, MIGRATIONS } from '../src/migrations/index.js';

/**
 * DataSecretsMaskedAtRest1763700000008 against rows as the previous release left
 * them: plaintext of a field made secret after it held values (in the changes of
 * the changelog and versions), an envelope of a secret field since removed (in
 * later changes and in a discovery sample), and an upsert response stored with
 * secrets revealed.
 */
describe('the secrets-at-rest migration', () => {
  let database: TestDatabase;
  let db: DataSource;
  const envelope = KeyRing.parse(`1:${randomBytes(32).toString('base64')}`).encrypt('sealed-value', 'a');
  const [collection, record, gone] = [randomUUID(), randomUUID(), randomUUID()];

  const migrate = (migrations: (typeof MIGRATIONS)[number][]) =>
    migrateService({ url: database.url, schema: DATA_SCHEMA, entities: [], migrations });

  beforeAll(async () => {
    database = await createTestDatabase('strata_data_migration');
    const previous = MIGRATIONS.filter((m) => m.name !== 'DataSecretsMaskedAtRest1763700000008');
    expect(previous).toHaveLength(MIGRATIONS.length - 1);
    await migrate(previous);
    db = new DataSource({ type: 'postgres', url: database.url, extra: { max: 1 } });
    await db.initialize();
    const secretKey = { id: 'p1', name: 'apiKey', type: 'string', isSecret: true };
    await db.query(
      `INSERT INTO data.collections (id, workspace_slug, record_slug, name, properties, schema_discovery_config, metadata, created_by, last_updated_by)
       VALUES ($1, 'ws', 'things', 'Things', $2, '{}', '{}', 'me', 'me')`,
      [collection, JSON.stringify([secretKey, { id: 'p2', name: 'note', type: 'string', isSecret: false }])],
    );
    await db.query(
      `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by) VALUES ($1, 'ws', $2, $3, 'me', 'me')`,
      [record, collection, { apiKey: envelope, note: 'n' }],
    );
    const plainChange = { apiKey: { old: 'PLAIN-old', new: 'PLAIN-new' }, note: { old: null, new: 'n' } };
    const strayChange = { removed: { old: envelope, new: null } };
    await db.query(
      `INSERT INTO data.record_changelog (id, record_id, action, user_id, changes) VALUES ($1, $3, 'update', 'me', $4), ($2, $3, 'update', 'me', $5)`,
      [randomUUID(), randomUUID(), record, plainChange, strayChange],
    );
    await db.query(
      `INSERT INTO data.record_versions (record_id, version, data, changes, updated_by, updated_at) VALUES ($1, 1, $2, $3, 'me', now())`,
      [record, { apiKey: envelope }, plainChange],
    );
    const response = (id: string) => ({
      data: { id, data: { apiKey: 'PLAIN-revealed', note: 'n' }, version: 1 },
      operation: 'created',
    });
    await db.query(
      `INSERT INTO data.idempotency_keys (workspace_slug, key, request_hash, status, response)
       VALUES ('ws', 'kept', 'h', 201, $1), ('ws', 'gone', 'h', 201, $2)`,
      [response(record), response(gone)],
    );
    await db.query(
      `INSERT INTO data.schema_suggestions (id, collection_id, field, property, sample) VALUES ($1, $2, 'removed', '{}', $3)`,
      [randomUUID(), collection, JSON.stringify(envelope)],
    );
    await migrate(MIGRATIONS);
  });

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('masks secrets in changes, whether plain or sealed, and leaves everything else alone', async () => {
    const changelog = await db.query<{ changes: unknown }[]>('SELECT changes FROM data.record_changelog');
    expect(changelog.map((r) => r.changes)).toEqual(
      expect.arrayContaining([
        { apiKey: { old: '********', new: '********' }, note: { old: null, new: 'n' } },
        { removed: { old: '********', new: null } },
      ]),
    );
    const [version] = await db.query<{ data: unknown; changes: unknown }[]>(
      'SELECT data, changes FROM data.record_versions',
    );
    expect(version!.changes).toEqual({ apiKey: { old: '********', new: '********' }, note: { old: null, new: 'n' } });
    // Sealed record data is not the migration's: `reencrypt` moves it.
    expect(version!.data).toEqual({ apiKey: envelope });
    const [stored] = await db.query<{ data: { apiKey: string } }[]>('SELECT data FROM data.records');
    expect(stored!.data.apiKey).toBe(envelope);
  });

  it('masks stored upsert responses, drops those of records that are gone, and masks discovery samples', async () => {
    const kept = await db.query<{ key: string; response: { data: { data: unknown } } }[]>(
      'SELECT key, response FROM data.idempotency_keys',
    );
    expect(kept.map((r) => r.key)).toEqual(['kept']);
    expect(kept[0]!.response.data.data).toEqual({ apiKey: '********', note: 'n' });
    const [suggestion] = await db.query<{ sample: string }[]>('SELECT sample FROM data.schema_suggestions');
    expect(suggestion!.sample).toBe('"********"');
  });
});
