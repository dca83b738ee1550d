import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { AuthConfig, reencryptAuth } from '@strata/auth';
import { KeyRing } from '@strata/crypto';
import { DataConfig, reencryptData } from '@strata/data';
import { keyRingOf, loadConfig, printReencryption, type ReencryptionReport } from '@strata/platform';
import { loginWithPassword } from '@strata/sdk';
import { WebhooksConfig, reencryptWebhooks } from '@strata/webhooks';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';
import { Receivers } from './support/webhook-receiver.js';
import { WEBHOOK_TEST_SETTINGS, createSubscription, workspaceApi, type WorkspaceApi } from './support/webhooks.js';

/**
 * Retiring a key version (docs/runbooks.md): values written under key 1, key 2
 * added as active, `reencrypt` run in every service (twice at once, as two
 * replicas might), key 1 removed, and everything read back through the HTTP API.
 */

const key = () => randomBytes(32).toString('base64');
const [K1, K2] = [key(), key()];
const RING_1 = `1:${K1}`;
const RING_12 = `1:${K1},2:${K2}`;
const RING_2 = `2:${K2}`;

let stack: Stack;
let db: pg.Client;
let api: WorkspaceApi;
const receivers = new Receivers();
const ws = `rotation-${Date.now().toString(36)}`;

/** The settings of one service's command, as its process would read them. */
function settings(keys: string): Record<string, string> {
  return {
    STRATA_ENV: 'development',
    DATABASE_URL: stack.databaseUrl,
    NATS_PREFIX: stack.natsPrefix,
    STRATA_ENCRYPTION_KEYS: keys,
  };
}

async function reencryptAll(keys: string, check = false) {
  return {
    data: await reencryptData(loadConfig(DataConfig, settings(keys)), { check }),
    webhooks: await reencryptWebhooks(loadConfig(WebhooksConfig, settings(keys)), { check }),
    auth: await reencryptAuth(loadConfig(AuthConfig, settings(keys)), { check }),
  };
}

async function restartAll(keys: string): Promise<void> {
  await stack.restartAuth({ STRATA_ENCRYPTION_KEYS: keys });
  await stack.restartData({ STRATA_ENCRYPTION_KEYS: keys });
  await stack.restartWebhooks({ STRATA_ENCRYPTION_KEYS: keys });
}

const remaining = (reports: ReencryptionReport[]) => reports.reduce((n, r) => n + r.remaining, 0);
const rewritten = (reports: ReencryptionReport[]) => reports.reduce((n, r) => n + r.rewritten, 0);

/** Every text of a service's tables that may hold an envelope. */
async function storedTexts(): Promise<string[]> {
  const { rows } = await db.query<{ t: string }>(`
    SELECT data::text AS t FROM data.records
    UNION ALL SELECT data::text FROM data.record_versions
    UNION ALL SELECT secret || coalesce(previous_secret, '') FROM webhooks.subscriptions
    UNION ALL SELECT private_jwk FROM iam.signing_keys
    UNION ALL SELECT value FROM iam.secrets`);
  return rows.map((r) => r.t);
}

beforeAll(async () => {
  stack = await startStack({ ...WEBHOOK_TEST_SETTINGS, STRATA_ENCRYPTION_KEYS: RING_1 });
  api = workspaceApi(stack, ws, await adminWorkspaceToken(stack, ws));
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await stack?.stop();
  await receivers.stopAll();
});

describe('retiring an encryption key version', () => {
  it('moves every stored envelope of every service to the new key, after which the old one can go', async () => {
    // Under key 1: records (nested secrets, versions), a legacy-bound value, a secret field since removed,
    // webhook secrets (current and previous), and auth's signing and cookie keys (made at its first start).
    const vault = await api('POST', '/structures', {
      name: 'Vault',
      enableVersioning: true,
      properties: [
        { name: 'name', type: 'string' },
        { name: 'apiKey', type: 'string', isSecret: true },
        { name: 'old', type: 'string', isSecret: true },
        { name: 'creds', type: 'object', properties: [{ name: 'token', type: 'string', isSecret: true }] },
        {
          name: 'contacts',
          type: 'array',
          items: { type: 'object' },
          itemSchema: [{ name: 'phone', type: 'string', isSecret: true }],
        },
      ],
    });
    expect(vault.status).toBe(200);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const made = await api('POST', '/records', {
        structureId: vault.body.id,
        data: {
          name: `v${n}`,
          apiKey: `api-${n}`,
          old: `old-${n}`,
          creds: { token: `token-${n}` },
          contacts: [{ phone: `phone-${n}` }],
        },
      });
      expect(made.status).toBe(201);
      ids.push(made.body.id);
    }
    expect((await api('PATCH', `/records/${ids[0]}`, { data: { apiKey: 'api-1b' } })).status).toBe(200);
    const legacy = KeyRing.parse(RING_1).encrypt('api-legacy', `${vault.body.id}:apiKey`);
    await db.query(`UPDATE data.records SET data = jsonb_set(data, '{apiKey}', $2) WHERE id = $1`, [
      ids[2],
      JSON.stringify(legacy),
    ]);
    // `old` is removed: its envelopes stay in the records, masked, and must survive the old key too.
    const { old: _old, ...kept } = Object.fromEntries(
      (vault.body.properties as { name: string }[]).map((p) => [p.name, p]),
    );
    expect((await api('PUT', `/structures/${vault.body.id}`, { properties: Object.values(kept) })).status).toBe(200);

    const hook = await receivers.start();
    const sub = await createSubscription(api, { url: hook.url('/vault'), events: ['record_created'] });
    const rotated = await api('POST', `/webhook-subscriptions/${sub.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    hook.trust('previous', sub.secret);
    hook.trust('current', rotated.body.secret);

    // Key 2 joins every ring, active; nothing moved yet: the census says what is left on key 1.
    await restartAll(RING_12);
    const before = await reencryptAll(RING_12, true);
    expect(remaining(before.data)).toBeGreaterThan(0);
    expect(remaining(before.webhooks)).toBe(2);
    expect(remaining(before.auth)).toBeGreaterThanOrEqual(2);
    const lines: string[] = [];
    expect(
      printReencryption('strata-data', before.data, keyRingOf(loadConfig(DataConfig, settings(RING_12))), true, (l) =>
        lines.push(l),
      ),
    ).toBe(1);
    expect(lines.join('\n')).toMatch(/data\.records: rewrote 0; envelopes v1: \d+.*; remaining \d+/);

    // Two runs at once (two replicas, two operators): they share the rows, none is rewritten twice.
    const dataConfig = loadConfig(DataConfig, settings(RING_12));
    const [a, b] = await Promise.all([
      reencryptData(dataConfig, { batchSize: 2 }),
      reencryptData(dataConfig, { batchSize: 2 }),
    ]);
    // Records: three; versions: four (1 and 2 of the patched record, 1 of the others).
    expect(rewritten(a) + rewritten(b)).toBe(7);
    const after = await reencryptAll(RING_12);
    expect(rewritten(after.data)).toBe(0);
    expect(rewritten(after.webhooks)).toBe(1);
    expect(rewritten(after.auth)).toBeGreaterThanOrEqual(2);
    for (const reports of Object.values(after)) {
      expect(remaining(reports)).toBe(0);
      for (const r of reports) {
        expect(r.unreadable).toEqual([]);
        expect(Object.keys(r.envelopes).filter((v) => v !== '2')).toEqual([]);
      }
    }
    const checked = await reencryptAll(RING_2, true);
    for (const reports of Object.values(checked)) expect(remaining(reports)).toBe(0);
    for (const text of await storedTexts()) expect(text).not.toMatch(/sv1\.1\./);

    // Key 1 leaves every ring: everything reads back through the API.
    await restartAll(RING_2);
    const fresh = await loginWithPassword({
      authUrl: stack.authUrl,
      email: stack.adminEmail,
      password: stack.adminPassword,
      workspace: ws,
    });
    const asFresh = workspaceApi(stack, ws, fresh.accessToken);
    const one = await asFresh('GET', `/records/${ids[0]}?includeHistory=true`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual({
      name: 'v1',
      apiKey: 'api-1b',
      old: '********',
      creds: { token: 'token-1' },
      contacts: [{ phone: 'phone-1' }],
    });
    expect(one.body.history.map((v: { data: { apiKey: string } }) => v.data.apiKey)).toEqual(['api-1', 'api-1b']);
    expect((await api('GET', `/records/${ids[2]}`)).body.data.apiKey).toBe('api-legacy');
    const list = await api('GET', `/records?structureId=${vault.body.id}`);
    expect(list.status).toBe(200);
    expect(list.body.results).toHaveLength(3);
    // A write under key 2 and a delivery signed with both webhook secrets.
    const made = await api('POST', '/records', { structureId: vault.body.id, data: { name: 'v4', apiKey: 'api-4' } });
    expect(made.status).toBe(201);
    const [arrival] = await hook.waitFor((x) => (x.body['recordId'] as string) === made.body.id);
    expect(arrival!.verifiedBy.sort()).toEqual(['current', 'previous']);
    // Auth signs with its (re-encrypted) key; a service account's token works.
    const iam = `${stack.authUrl}/workspace/${ws}/api/v1`;
    const account = await call('POST', `${iam}/service-accounts`, {
      token: fresh.accessToken,
      body: { name: 'after' },
    });
    expect(account.status).toBe(201);
  });
});
