import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { PropertyDefinition } from '@strata/contracts';
import { KeyRing } from '@strata/crypto';
import { migrateService } from '@strata/db';
import { loadConfig, runReencryption, type ReencryptionTarget } from '@strata/platform';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { DataConfig } from '../src/data.config.js';
import { DATA_SCHEMA, MIGRATIONS } from '../src/migrations/index.js';
import { RecordSecrets } from '../src/secrets/record-secrets.js';
import { recordTargets } from '../src/secrets/reencrypt-records.js';

/** The data service's `reencrypt` over its own tables: a run that dies midway, and the run after it. */
describe('reencrypt of record secrets', () => {
  let database: TestDatabase;
  let db: DataSource;
  const [k1, k2] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
  const secretsUnder = (keys: string) => new RecordSecrets(loadConfig(DataConfig, { STRATA_ENCRYPTION_KEYS: keys }));
  const properties: PropertyDefinition[] = [
    {
      id: 'p',
      name: 'apiKey',
      type: 'string',
      isSecret: true,
      required: false,
      nullable: true,
      isUnique: false,
      immutable: false,
    },
  ];
  const collection = { id: randomUUID(), properties };
  const ids = Array.from({ length: 10 }, () => randomUUID());

  const versionsOnDisk = async (): Promise<string[]> =>
    (
      await db.query<{ v: string }[]>(`SELECT split_part(data->>'apiKey', '.', 2) AS v FROM data.records ORDER BY id`)
    ).map((r) => r.v);

  beforeAll(async () => {
    database = await createTestDatabase('strata_data_reencrypt');
    await migrateService({ url: database.url, schema: DATA_SCHEMA, entities: [], migrations: MIGRATIONS });
    db = new DataSource({ type: 'postgres', url: database.url, extra: { max: 2 } });
    await db.initialize();
    await db.query(
      `INSERT INTO data.collections (id, workspace_slug, record_slug, name, properties, schema_discovery_config, metadata, created_by, last_updated_by)
       VALUES ($1, 'ws', 'things', 'Things', $2, '{}', '{}', 'me', 'me')`,
      [collection.id, JSON.stringify(properties)],
    );
    const old = secretsUnder(`1:${k1}`);
    for (const id of ids) {
      await db.query(
        `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by) VALUES ($1, 'ws', $2, $3, 'me', 'me')`,
        [id, collection.id, old.seal(collection, id, { apiKey: `secret ${id}` })],
      );
    }
  });

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('keeps what a run that died had committed, and the next run does only the rest', async () => {
    const secrets = secretsUnder(`1:${k1},2:${k2}`);
    const [records] = recordTargets(secrets, new Map([[collection.id, collection]])) as ReencryptionTarget<{
      id: string;
    }>[];
    let saves = 0;
    const dying: ReencryptionTarget<{ id: string }> = {
      ...records!,
      save: async (tx, rows) => {
        if (++saves === 3) throw new Error('the process died');
        await records!.save(tx, rows);
      },
    };
    await expect(
      runReencryption(db, secrets.keyRing, [dying as ReencryptionTarget<never>], { batchSize: 3 }),
    ).rejects.toThrow('the process died');
    // Two batches of three committed; the third rolled back.
    expect((await versionsOnDisk()).filter((v) => v === '2')).toHaveLength(6);

    const [report] = await runReencryption(db, secrets.keyRing, [records as ReencryptionTarget<never>], {
      batchSize: 3,
    });
    expect(report).toMatchObject({
      target: 'data.records',
      rewritten: 4,
      remaining: 0,
      unreadable: [],
      envelopes: { '2': 10 },
    });
    expect(await versionsOnDisk()).toEqual(Array(10).fill('2'));
    // Every value reads back under key 2 alone, bound to its record.
    const onlyTwo = secretsUnder(`2:${k2}`);
    const rows = await db.query<{ id: string; data: Record<string, unknown> }[]>('SELECT id, data FROM data.records');
    for (const row of rows) expect(onlyTwo.open(collection, row.id, row.data)).toEqual({ apiKey: `secret ${row.id}` });
    expect(KeyRing.versionOf(rows[0]!.data['apiKey'] as string)).toBe(2);
  });
});
