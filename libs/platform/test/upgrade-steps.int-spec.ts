import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { associatedData, KeyRing, SEAL_PURPOSES, type Binding } from '@strata/crypto';
import { serviceDataSourceOptions } from '@strata/db';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import {
  DEVELOPMENT_ENCRYPTION_KEYS,
  envelopeColumns,
  resealBindingsStep,
  runReencryption,
  runUpgradeSteps,
  type ReencryptionOptions,
  type UpgradeStep,
} from '../src/index.js';

/**
 * The `upgrade` command's steps against a real PostgreSQL: a step a migration
 * marked due runs and is forgotten once done; one left unfinished (a row a
 * writer held locked kept its old binding) stays due until a later run
 * finishes it; a step this release does not know is left alone.
 */
describe('upgrade steps', () => {
  let database: TestDatabase;
  let ds: DataSource;
  const ring = KeyRing.parse(DEVELOPMENT_ENCRYPTION_KEYS);
  const settings = { STRATA_ENCRYPTION_KEYS: DEVELOPMENT_ENCRYPTION_KEYS, STRATA_ENCRYPTION_ACTIVE_KEY: 0 };
  const binding = (id: string): Binding => ({
    aad: associatedData(SEAL_PURPOSES.webhookSubscriptionSecret, id),
    legacy: [`legacy:${id}`],
  });
  const source = () => ({ url: database.url, schema: 'upg' });
  const reencrypt = (options: ReencryptionOptions) =>
    runReencryption(
      ds,
      ring,
      [
        envelopeColumns({
          table: 'upg.secrets',
          key: 'id',
          columns: ['value'],
          binding: (row) => binding(String(row['id'])),
          ring,
        }),
      ],
      options,
    );
  const due = async () =>
    (await ds.query<{ name: string }[]>('SELECT name FROM upg.upgrade_steps ORDER BY name')).map((r) => r.name);
  const value = async (id: string) =>
    (await ds.query<{ value: string }[]>('SELECT value FROM upg.secrets WHERE id = $1', [id]))[0]!.value;

  beforeAll(async () => {
    database = await createTestDatabase('strata_upgrade_steps');
    ds = new DataSource(serviceDataSourceOptions({ url: database.url, schema: 'upg', entities: [], migrations: [] }));
    await ds.initialize();
    await ds.query('CREATE SCHEMA upg');
    await ds.query(
      'CREATE TABLE upg.upgrade_steps (name text PRIMARY KEY, due_since timestamptz NOT NULL DEFAULT now())',
    );
    await ds.query('CREATE TABLE upg.secrets (id text PRIMARY KEY, value text NOT NULL)');
    for (const id of ['a', 'b']) {
      await ds.query('INSERT INTO upg.secrets (id, value) VALUES ($1, $2)', [
        id,
        ring.encrypt(`secret ${id}`, `legacy:${id}`),
      ]);
    }
    await ds.query(`INSERT INTO upg.upgrade_steps (name) VALUES ('reseal-purpose-bindings'), ('from-a-newer-release')`);
  });

  afterAll(async () => {
    await ds?.destroy();
    await database?.drop();
  });

  it('leaves a step due while a value keeps its old binding, and forgets it once the next run finishes', async () => {
    const step = resealBindingsStep(settings, reencrypt);
    const lines: string[] = [];
    // A writer holds row b while the step runs: the step passes it over.
    const writer = new DataSource(
      serviceDataSourceOptions({ url: database.url, schema: 'upg', entities: [], migrations: [] }),
    );
    await writer.initialize();
    const held = writer.createQueryRunner();
    try {
      await held.connect();
      await held.startTransaction();
      await held.query(`SELECT 1 FROM upg.secrets WHERE id = 'b' FOR UPDATE`);
      const first = await runUpgradeSteps(source(), [step], (line) => lines.push(line));
      expect(first).toEqual({ done: [], due: ['from-a-newer-release', 'reseal-purpose-bindings'] });
    } finally {
      await held.rollbackTransaction();
      await held.release();
      await writer.destroy();
    }
    expect(lines).toContain('from-a-newer-release: due, but not a step of this release (left as it is)');
    expect(lines).toContain('reseal-purpose-bindings: not finished; it stays due (run upgrade again)');
    expect(ring.decryptString(await value('a'), binding('a').aad)).toBe('secret a');
    expect(ring.unseal(await value('b'), binding('b')).binding).toBe(1);
    expect(await due()).toEqual(['from-a-newer-release', 'reseal-purpose-bindings']);

    const second = await runUpgradeSteps(source(), [step], () => undefined);
    expect(second).toEqual({ done: ['reseal-purpose-bindings'], due: ['from-a-newer-release'] });
    expect(ring.decryptString(await value('b'), binding('b').aad)).toBe('secret b');
    expect(await due()).toEqual(['from-a-newer-release']);
  });

  it('runs only the steps that are due', async () => {
    let ran = 0;
    const step: UpgradeStep = {
      name: 'never-marked',
      run: async () => {
        ran++;
        return true;
      },
    };
    expect(await runUpgradeSteps(source(), [step], () => undefined)).toEqual({
      done: [],
      due: ['from-a-newer-release'],
    });
    expect(ran).toBe(0);
  });
});
