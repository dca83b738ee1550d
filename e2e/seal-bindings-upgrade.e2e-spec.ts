import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { AuthConfig, upgradeAuth } from '@strata/auth';
import { ComputeConfig, upgradeCompute } from '@strata/compute';
import { associatedData, KeyRing, SEAL_PURPOSES, triggerSigningSecretBinding } from '@strata/crypto';
import { DataConfig, upgradeData } from '@strata/data';
import { InboundConfig, upgradeInbound } from '@strata/inbound';
import { OrchestrationConfig, upgradeOrchestration } from '@strata/orchestration';
import { loadConfig, type UpgradeOutcome } from '@strata/platform';
import { loginWithPassword } from '@strata/sdk';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';
import { upgradeWebhooks, WebhooksConfig } from '@strata/webhooks';

/**
 * An upgrade from the release that bound sealed values without a purpose
 * (docs/runbooks.md, "Upgrade steps"), across every service: envelopes written
 * the old way (rewritten here under the old associated data, as that release
 * wrote them) still open through the API before the `upgrade` step runs, among
 * them the trigger signing secret compute seals and inbound opens; `upgrade`
 * re-seals each under its purpose's binding, which the old binding then no
 * longer opens, and the services keep answering.
 */
const RING = `1:${randomBytes(32).toString('base64')}`;
const ring = KeyRing.parse(RING);
const P = SEAL_PURPOSES;
let stack: Stack;
let db: pg.Client;
let token: string;
const ws = `bind-${Date.now().toString(36)}`;
const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const orchBase = () => `${stack.baseUrl}/orchestration/ws/${ws}/api/v1`;

/** What each envelope was: its place, the associated data it has now, and the one the old release gave it. */
interface Sealed {
  readonly read: () => Promise<string>;
  readonly write: (envelope: string) => Promise<void>;
  readonly aad: string;
  readonly legacy: string;
}
const sealed: Record<string, Sealed> = {};

const opens = (envelope: string, aad: string): boolean => {
  try {
    ring.decrypt(envelope, aad);
    return true;
  } catch {
    return false;
  }
};

/** A text column of one row. */
const column = (table: string, col: string, where: string, id: string) => ({
  read: async () => (await db.query(`SELECT ${col} AS v FROM ${table} WHERE ${where} = $1`, [id])).rows[0].v as string,
  write: async (envelope: string) => {
    await db.query(`UPDATE ${table} SET ${col} = $2 WHERE ${where} = $1`, [id, envelope]);
  },
});
/** The `value` of a sealed object at `path` in a jsonb column of one row. */
const inJson = (table: string, col: string, where: string, id: string, path: string[]) => ({
  read: async () =>
    (await db.query(`SELECT ${col} #>> $2 AS v FROM ${table} WHERE ${where} = $1`, [id, [...path, 'value']])).rows[0]
      .v as string,
  write: async (envelope: string) => {
    await db.query(`UPDATE ${table} SET ${col} = jsonb_set(${col}, $2, to_jsonb($3::text)) WHERE ${where} = $1`, [
      id,
      [...path, 'value'],
      envelope,
    ]);
  },
});
/** A string at `path` in a jsonb column (a record's secret field). */
const atPath = (table: string, col: string, where: string, id: string, path: string[]) => ({
  read: async () =>
    (await db.query(`SELECT ${col} #>> $2 AS v FROM ${table} WHERE ${where} = $1`, [id, path])).rows[0].v as string,
  write: async (envelope: string) => {
    await db.query(`UPDATE ${table} SET ${col} = jsonb_set(${col}, $2, to_jsonb($3::text)) WHERE ${where} = $1`, [
      id,
      path,
      envelope,
    ]);
  },
});

const settings = () => ({
  STRATA_ENV: 'development',
  DATABASE_URL: stack.databaseUrl,
  NATS_PREFIX: stack.natsPrefix,
  STRATA_ENCRYPTION_KEYS: RING,
});

const signed = (secret: string, body: string) => ({
  body,
  headers: {
    'content-type': 'application/json',
    'x-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  },
});

beforeAll(async () => {
  stack = await startStack({ STRATA_ENCRYPTION_KEYS: RING, INBOUND_TRIGGER_CACHE_MS: '0' });
  token = await adminWorkspaceToken(stack, ws);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await stack?.stop();
});

describe('the upgrade to purpose bindings', () => {
  let hook: string;
  let arrival: string;
  let orchestration: string;
  let record: string;

  it('reads values sealed the old way in every service, before the upgrade step', async () => {
    const post = (path: string, body: unknown) => call('POST', `${base()}${path}`, { token, body });
    const fn = await post('/compute-functions', {
      name: 'f',
      code: 'async function run() { return { success: true }; }',
    });
    const made = await post('/function-triggers', {
      name: 'hook',
      functionId: fn.body.id,
      executionType: 'http-trigger',
      triggerMetadata: { path: 'hook', validateSignature: true, signingSecret: 'whsec-bind-1' },
    });
    expect(made.status).toBe(201);
    hook = made.body.id;
    sealed['compute.triggers signing secret'] = {
      ...inJson('compute.triggers', 'metadata', 'id', hook, ['signingSecret']),
      aad: triggerSigningSecretBinding(hook).aad,
      legacy: `compute.triggers.params:${hook}:#signingSecret`,
    };
    const open = await post('/function-triggers', {
      name: 'open',
      functionId: fn.body.id,
      executionType: 'http-trigger',
      triggerMetadata: { path: 'open' },
    });
    expect(open.status).toBe(201);
    const arrived = await call('POST', `${base()}/http-trigger/open`, { body: { paid: 7 } });
    expect(arrived.status).toBe(202);
    arrival = arrived.body.inboundEventId;
    for (const part of ['payload', 'headers'] as const) {
      sealed[`inbound ${part}`] = {
        ...column('inbound.inbound_events', part, 'id', arrival),
        aad: associatedData(part === 'payload' ? P.arrivalPayload : P.arrivalHeaders, arrival),
        legacy: `inbound.inbound_events:${arrival}:${part}`,
      };
    }
    const orch = await call('POST', `${orchBase()}/orchestrations`, {
      token,
      body: {
        slug: 'bound',
        name: 'Bound',
        status: 'active',
        trigger: { type: 'http-trigger', path: 'bound', validateSignature: true, signingSecret: 'orch-bind-1' },
        steps: [{ id: 'a', type: 'delay', delayMs: 1 }],
      },
    });
    expect(orch.status).toBe(201);
    orchestration = orch.body.id;
    sealed['orchestration signing secret'] = {
      ...inJson('orchestration.orchestrations', 'trigger', 'id', orchestration, ['signingSecret']),
      aad: associatedData(P.orchestrationSigningSecret, orchestration),
      legacy: `orchestration.trigger.signingSecret:${orchestration}`,
    };
    const subscription = await post('/webhook-subscriptions', {
      name: 'bound',
      url: 'https://example.com/hook',
      events: ['record_created'],
    });
    expect(subscription.status).toBeLessThan(300);
    sealed['webhooks subscription secret'] = {
      ...column('webhooks.subscriptions', 'secret', 'id', subscription.body.id),
      aad: associatedData(P.webhookSubscriptionSecret, subscription.body.id),
      legacy: `webhook-subscription:${subscription.body.id}`,
    };
    const collection = await post('/structures', {
      name: 'Vault',
      properties: [{ name: 'apiKey', type: 'string', isSecret: true }],
    });
    expect(collection.status).toBe(200);
    const created = await post('/records', { structureId: collection.body.id, data: { apiKey: 'api-bind-1' } });
    expect(created.status).toBe(201);
    record = created.body.id;
    sealed['data record secret'] = {
      ...atPath('data.records', 'data', 'id', record, ['apiKey']),
      aad: associatedData(P.recordSecret, collection.body.id, record, 'apiKey'),
      legacy: `record:${collection.body.id}:${record}:apiKey`,
    };
    const keys = await db.query<{ kid: string }>('SELECT kid FROM iam.signing_keys');
    for (const { kid } of keys.rows) {
      sealed[`auth signing key ${kid}`] = {
        ...column('iam.signing_keys', 'private_jwk', 'kid', kid),
        aad: associatedData(P.signingKey, kid),
        legacy: kid,
      };
    }
    sealed['auth cookie keys'] = {
      ...column('iam.secrets', 'value', 'name', 'oidc-cookie-keys'),
      aad: associatedData(P.providerSecret, 'oidc-cookie-keys'),
      legacy: 'oidc-cookie-keys',
    };

    // Every envelope as the previous release wrote it.
    for (const [name, s] of Object.entries(sealed)) {
      const envelope = await s.read();
      expect({ name, bound: opens(envelope, s.aad) }).toEqual({ name, bound: true });
      await s.write(ring.encrypt(ring.decrypt(envelope, s.aad), s.legacy));
    }
    for (const schema of ['compute', 'inbound', 'orchestration', 'webhooks', 'data', 'iam']) {
      const due = await db.query(`SELECT name FROM ${schema}.upgrade_steps`);
      expect({ schema, due: due.rows }).toEqual({ schema, due: [{ name: 'reseal-purpose-bindings' }] });
    }

    await readThroughTheApi('whsec-bind-1');
  });

  /** Each service opens its sealed values: signatures verify, bodies and secrets read back, tokens are signed. */
  async function readThroughTheApi(secret: string): Promise<void> {
    // Auth restarts with its signing and cookie keys as stored, and signs a new login's token.
    await stack.restartAuth();
    token = (
      await loginWithPassword({
        authUrl: stack.authUrl,
        email: stack.adminEmail,
        password: stack.adminPassword,
        workspace: ws,
      })
    ).accessToken;
    const body = JSON.stringify({ n: 1 });
    const verified = await call('POST', `${base()}/http-trigger/hook`, signed(secret, body));
    expect(verified.status).toBe(202);
    await eventually(async () => {
      const listed = await call('GET', `${base()}/inbound-events/${verified.body.inboundEventId}`, { token });
      return listed.body.data?.signatureResult === 'verified' ? true : undefined;
    }, 20_000);
    const detail = await call('GET', `${base()}/inbound-events/${arrival}`, { token });
    expect(detail.body.data.body).toEqual({ paid: 7 });
    const started = await call('POST', `${orchBase()}/webhooks/bound`, signed('orch-bind-1', JSON.stringify({ a: 1 })));
    expect(started.status).toBe(200);
    const revealed = await call('GET', `${base()}/records/${record}`, { token });
    expect(revealed.body.data.apiKey).toBe('api-bind-1');
  }

  it('re-seals every envelope under its purpose binding with `upgrade`, after which the old one opens none', async () => {
    const config = settings();
    const outcomes: UpgradeOutcome[] = [
      await upgradeAuth(loadConfig(AuthConfig, config), () => undefined),
      await upgradeData(loadConfig(DataConfig, config), () => undefined),
      await upgradeWebhooks(loadConfig(WebhooksConfig, config), () => undefined),
      await upgradeCompute(loadConfig(ComputeConfig, config), () => undefined),
      await upgradeInbound(loadConfig(InboundConfig, config), () => undefined),
      await upgradeOrchestration(loadConfig(OrchestrationConfig, config), () => undefined),
    ];
    for (const outcome of outcomes) expect(outcome).toEqual({ done: ['reseal-purpose-bindings'], due: [] });
    for (const [name, s] of Object.entries(sealed)) {
      const envelope = await s.read();
      expect({ name, bound: opens(envelope, s.aad), legacy: opens(envelope, s.legacy) }).toEqual({
        name,
        bound: true,
        legacy: false,
      });
    }
    for (const schema of ['compute', 'inbound', 'orchestration', 'webhooks', 'data', 'iam']) {
      expect((await db.query(`SELECT name FROM ${schema}.upgrade_steps`)).rows).toEqual([]);
    }
    await readThroughTheApi('whsec-bind-1');
  });
});
