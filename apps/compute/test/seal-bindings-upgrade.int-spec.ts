import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { KeyRing } from '@strata/crypto';
import { migrateService } from '@strata/db';
import { keyRingOf, loadConfig } from '@strata/platform';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { ComputeConfig } from '../src/compute.config.js';
import { draftBindings } from '../src/drafts/draft-secrets.js';
import { endpointSecretBinding } from '../src/endpoints/endpoint-credentials.js';
import { COMPUTE_SCHEMA, MIGRATIONS } from '../src/migrations/index.js';
import { upgradeCompute } from '../src/reencrypt-compute.js';
import { documentBinding } from '../src/run-documents/run-document-seal.js';
import { openRunParams, runParamsBinding } from '../src/runs/run-params.js';
import { openTriggerParams, triggerBindings } from '../src/triggers/trigger-params.js';

/**
 * The upgrade to one binding per sealed purpose, against rows as the previous
 * release left them: every envelope bound the old way (`compute.triggers.params:<trigger>:<name>`
 * and so on), and a parameter named `#signingSecret` holding the trigger's own
 * signing secret (the paste the previous release let through). The migration
 * removes that parameter and marks the re-sealing due; reads open the old binding
 * meanwhile; `upgrade` re-seals everything under the new one and forgets the step.
 */
describe('upgrading compute to purpose bindings', () => {
  let database: TestDatabase;
  let db: DataSource;
  let config: ComputeConfig;
  let ring: KeyRing;
  const [fn, hook, endpoint, draft, run, doc] = [
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
  ];
  const lines: string[] = [];

  const legacy = (plain: string, aad: string) => ({
    value: ring.encrypt(JSON.stringify(plain), aad),
    encrypted: true,
    keyVersion: 1,
  });
  const metadataOf = async (table: string, key: string, id: string) =>
    (await db.query<{ metadata: Record<string, any> }[]>(`SELECT metadata FROM ${table} WHERE ${key} = $1`, [id]))[0]!
      .metadata;
  const due = async () =>
    (await db.query<{ name: string }[]>('SELECT name FROM compute.upgrade_steps')).map((r) => r.name);

  beforeAll(async () => {
    database = await createTestDatabase('strata_compute_bindings');
    config = loadConfig(ComputeConfig, { ...process.env, STRATA_ENV: 'development', DATABASE_URL: database.url });
    ring = keyRingOf(config);
    const source = { url: database.url, schema: COMPUTE_SCHEMA, entities: [], migrations: [] };
    const previous = MIGRATIONS.filter((m) => m.name !== 'ComputeSealBindings1766100000000');
    expect(previous).toHaveLength(MIGRATIONS.length - 1);
    await migrateService({ ...source, migrations: previous });
    db = new DataSource({ type: 'postgres', url: database.url, extra: { max: 1 } });
    await db.initialize();

    await db.query(
      `INSERT INTO compute.functions (id, workspace_slug, name, code, version, code_hash, created_by, updated_by)
       VALUES ($1, 'ws', 'fn', 'async function run() {}', 1, $2, 'me', 'me')`,
      [fn, 'a'.repeat(64)],
    );
    const secret = legacy('whsec-legacy', `compute.triggers.params:${hook}:#signingSecret`);
    const metadata = {
      path: 'hook',
      validateSignature: true,
      signingSecret: secret,
      params: {
        token: legacy('tok-legacy', `compute.triggers.params:${hook}:token`),
        // The signing secret's own envelope, pasted as a parameter before this release refused it.
        '#signingSecret': secret,
        plain: 1,
      },
    };
    await db.query(
      `INSERT INTO compute.triggers (id, workspace_slug, name, function_id, execution_type, metadata, version, created_by, updated_by, created_at, updated_at)
       VALUES ($1, 'ws', 'hook', $2, 'http-trigger', $3, 1, 'me', 'me', now(), now()),
              ($4, 'ws', 'endpoint', $2, 'endpoint', '{"path": "e", "params": {}}', 1, 'me', 'me', now(), now())`,
      [hook, fn, metadata, endpoint],
    );
    await db.query(
      `INSERT INTO compute.trigger_versions (trigger_id, version, workspace_slug, name, function_id, metadata, created_by, created_at)
       VALUES ($1, 1, 'ws', 'hook', $2, $3, 'me', now())`,
      [hook, fn, metadata],
    );
    await db.query(
      `INSERT INTO compute.drafts (id, workspace_slug, resource_type, data, created_by) VALUES ($1, 'ws', 'function-triggers', $2, 'me')`,
      [
        draft,
        {
          triggerMetadata: {
            signingSecret: legacy('whsec-draft', `compute.drafts.params:${draft}:#signingSecret`),
            params: {
              key: legacy('key-draft', `compute.drafts.params:${draft}:key`),
              '#signingSecret': legacy('whsec-draft', `compute.drafts.params:${draft}:#signingSecret`),
            },
          },
        },
      ],
    );
    await db.query(
      `INSERT INTO compute.endpoint_credentials (trigger_id, workspace_slug, signing_secret, signing_secret_key_version, signing_secret_created_at)
       VALUES ($1, 'ws', $2, 1, now())`,
      [endpoint, ring.encrypt('ses-legacy', `compute.endpoint_credentials.signing_secret:${endpoint}`)],
    );
    const params = { triggerParams: {}, executionParams: { n: 1 } };
    await db.query(
      `INSERT INTO compute.runs (id, job_id, workspace_slug, function_code_hash, code, execution_source, status, params,
                                 params_key_version, execution_context, limits, queued_at, created_by)
       VALUES ($1, $2, 'ws', $3, 'async function run() {}', 'manual', 'succeeded', $4, 1, '{}', '{}', now(), 'me')`,
      [run, randomUUID(), 'a'.repeat(64), ring.encrypt(JSON.stringify(params), `compute.runs.params:${run}`)],
    );
    await db.query(
      `INSERT INTO compute.run_documents (id, workspace_slug, run_id, name, content, size_bytes, created_at, expires_at)
       VALUES ($1, 'ws', $2, 'doc', $3, 2, now(), now() + interval '1 day')`,
      [doc, run, ring.encrypt('{"kept":true}', `compute.run_documents:${doc}`)],
    );
    await migrateService({ ...source, migrations: MIGRATIONS });
  });

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('removes every parameter named #signingSecret and marks the re-sealing due', async () => {
    for (const [table, key] of [
      ['compute.triggers', 'id'],
      ['compute.trigger_versions', 'trigger_id'],
    ] as const) {
      const metadata = await metadataOf(table, key, hook);
      expect(Object.keys(metadata['params'])).toEqual(['plain', 'token']);
      expect(metadata['signingSecret']).toMatchObject({ encrypted: true });
    }
    const [row] = await db.query<{ data: any }[]>('SELECT data FROM compute.drafts WHERE id = $1', [draft]);
    expect(Object.keys(row!.data.triggerMetadata.params)).toEqual(['key']);
    expect(await due()).toEqual(['reseal-purpose-bindings']);
  });

  it('reads values bound the old way until the step has run, but never a parameter as the signing secret', async () => {
    const metadata = await metadataOf('compute.triggers', 'id', hook);
    expect(openTriggerParams(ring, triggerBindings(hook), metadata['params'])).toEqual({
      token: 'tok-legacy',
      plain: 1,
    });
    expect(ring.unsealString(metadata['signingSecret'].value, triggerBindings(hook).signingSecret)).toBe(
      '"whsec-legacy"',
    );
    // The parameter of that name would open under no binding but its own.
    expect(() =>
      openTriggerParams(ring, triggerBindings(hook), { '#signingSecret': metadata['signingSecret'] }),
    ).toThrow(/associated data/);
  });

  it('re-seals every envelope under its purpose binding, after which the old binding opens none, and forgets the step', async () => {
    const outcome = await upgradeCompute(config, (line) => lines.push(line));
    expect(outcome).toEqual({ done: ['reseal-purpose-bindings'], due: [] });
    expect(await due()).toEqual([]);
    expect(lines).toContain('strata-compute: reseal-purpose-bindings: done');

    const opened = (envelope: string, aad: string) => ring.decryptString(envelope, aad);
    for (const [table, key] of [
      ['compute.triggers', 'id'],
      ['compute.trigger_versions', 'trigger_id'],
    ] as const) {
      const metadata = await metadataOf(table, key, hook);
      const bind = triggerBindings(hook);
      expect(opened(metadata['params'].token.value, bind.param('token').aad)).toBe('"tok-legacy"');
      expect(opened(metadata['signingSecret'].value, bind.signingSecret.aad)).toBe('"whsec-legacy"');
      expect(() => opened(metadata['params'].token.value, `compute.triggers.params:${hook}:token`)).toThrow();
      expect(() => opened(metadata['signingSecret'].value, `compute.triggers.params:${hook}:#signingSecret`)).toThrow();
    }
    const [row] = await db.query<{ data: any }[]>('SELECT data FROM compute.drafts WHERE id = $1', [draft]);
    const drafted = draftBindings(draft);
    expect(opened(row!.data.triggerMetadata.params.key.value, drafted.param('key').aad)).toBe('"key-draft"');
    expect(opened(row!.data.triggerMetadata.signingSecret.value, drafted.signingSecret.aad)).toBe('"whsec-draft"');
    const [credentials] = await db.query<{ signing_secret: string }[]>(
      'SELECT signing_secret FROM compute.endpoint_credentials WHERE trigger_id = $1',
      [endpoint],
    );
    expect(opened(credentials!.signing_secret, endpointSecretBinding(endpoint).aad)).toBe('ses-legacy');
    const [stored] = await db.query<{ params: string }[]>('SELECT params FROM compute.runs WHERE id = $1', [run]);
    expect(opened(stored!.params, runParamsBinding(run).aad)).toContain('"executionParams":{"n":1}');
    expect(openRunParams(ring, run, stored!.params)).toEqual({ triggerParams: {}, executionParams: { n: 1 } });
    const [document] = await db.query<{ content: string }[]>(
      'SELECT content FROM compute.run_documents WHERE id = $1',
      [doc],
    );
    expect(opened(document!.content, documentBinding(doc).aad)).toBe('{"kept":true}');

    // Nothing is due any more: a second upgrade does nothing.
    const again: string[] = [];
    expect(await upgradeCompute(config, (line) => again.push(line))).toEqual({ done: [], due: [] });
    expect(again).toEqual(['strata-compute: no upgrade step is due']);
  });
});
