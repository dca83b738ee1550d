import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { eventually } from '@strata/testing';
import { ComputeConfig, reencryptCompute } from '@strata/compute';
import { InboundConfig, reencryptInbound } from '@strata/inbound';
import { OrchestrationConfig, reencryptOrchestration } from '@strata/orchestration';
import { loadConfig, type ReencryptionReport } from '@strata/platform';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Retiring a key version for compute's and inbound's envelopes (docs/runbooks.md):
 * trigger parameters and signing secrets (current, versions and drafts), endpoint signing
 * secrets, run parameters, and captured arrivals, written under key 1, moved to
 * key 2 by `reencrypt`, then read back through the API with key 1 gone.
 */
const key = () => randomBytes(32).toString('base64');
const [K1, K2] = [key(), key()];
const RING_1 = `1:${K1}`;
const RING_12 = `1:${K1},2:${K2}`;
const RING_2 = `2:${K2}`;

let stack: Stack;
let db: pg.Client;
let token: string;
const ws = `rot-compute-${Date.now().toString(36)}`;
const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;

function settings(keys: string): Record<string, string> {
  return {
    STRATA_ENV: 'development',
    DATABASE_URL: stack.databaseUrl,
    NATS_PREFIX: stack.natsPrefix,
    STRATA_ENCRYPTION_KEYS: keys,
  };
}
const reencryptBoth = async (keys: string, check = false) => [
  ...(await reencryptCompute(loadConfig(ComputeConfig, settings(keys)), { check })),
  ...(await reencryptInbound(loadConfig(InboundConfig, settings(keys)), { check })),
  ...(await reencryptOrchestration(loadConfig(OrchestrationConfig, settings(keys)), { check })),
];
const remaining = (reports: ReencryptionReport[]) => reports.reduce((n, r) => n + r.remaining, 0);

beforeAll(async () => {
  stack = await startStack({ STRATA_ENCRYPTION_KEYS: RING_1 });
  token = await adminWorkspaceToken(stack, ws);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await stack?.stop();
});

describe('retiring a key version: compute and inbound', () => {
  it('moves every compute and inbound envelope to the new key, after which the old one can go', async () => {
    const post = (path: string, body: unknown) => call('POST', `${base()}${path}`, { token, body });
    const fn = await post('/compute-functions', {
      name: 'f',
      code: 'async function run() { return { success: true }; }',
    });
    const endpointFn = await post('/compute-functions', { name: 'e', code: 'export default async () => 1;' });
    const trigger = await post('/function-triggers', {
      name: 'with-secret',
      functionId: fn.body.id,
      triggerMetadata: { params: { token: { value: 'param-secret', encrypt: true } } },
    });
    expect(trigger.status).toBe(201);
    const updated = await call('PUT', `${base()}/function-triggers/${trigger.body.id}`, {
      token,
      body: { triggerMetadata: { params: { token: { value: 'param-secret-2', encrypt: true } } } },
    });
    expect(updated.status).toBe(200);
    const endpoint = await post('/function-triggers', {
      name: 'signed-endpoint',
      functionId: endpointFn.body.id,
      executionType: 'endpoint',
      triggerMetadata: { path: 'signed', auth: { mode: 'hmac' } },
    });
    expect(endpoint.status).toBe(201);
    const hook = await post('/function-triggers', {
      name: 'hook',
      functionId: fn.body.id,
      executionType: 'http-trigger',
      triggerMetadata: { path: 'hook', validateSignature: true, signingSecret: 'hook-secret' },
    });
    expect(hook.status).toBe(201);
    expect(
      (await post('/compute-functions/test', { code: 'async function run() { return 1; }', params: { a: 1 } })).status,
    ).toBe(200);
    const open = await post('/function-triggers', {
      name: 'open-hook',
      functionId: fn.body.id,
      executionType: 'http-trigger',
      triggerMetadata: { path: 'open' },
    });
    expect(open.status).toBe(201);
    const draft = await post('/drafts', {
      resourceType: 'function-triggers',
      data: {
        name: 'drafted',
        functionId: fn.body.id,
        triggerMetadata: { params: { token: { value: 'draft-secret', encrypt: true } } },
      },
    });
    expect(draft.status).toBe(201);
    const orchestration = await call('POST', `${stack.baseUrl}/orchestration/ws/${ws}/api/v1/orchestrations`, {
      token,
      body: {
        slug: 'signed',
        name: 'Signed',
        trigger: { type: 'http-trigger', path: 'signed', validateSignature: true, signingSecret: 'orch-secret' },
        steps: [{ id: 'a', type: 'delay', delayMs: 1 }],
      },
    });
    expect(orchestration.status).toBe(201);
    const arrival = await call('POST', `${base()}/http-trigger/open`, { body: { paid: 42 } });
    expect(arrival.status).toBe(202);
    // Its run is queued (a sealed run row too) before the services restart.
    await eventually(async () => {
      const listed = await call('GET', `${base()}/inbound-events`, { token });
      return listed.body.data[0]?.dispatchStatus === 'dispatched' ? true : undefined;
    }, 20_000);

    // Key 2 joins, active; the census shows what is left on key 1 in every table.
    await stack.restartCompute({ STRATA_ENCRYPTION_KEYS: RING_12 });
    await stack.restartInbound({ STRATA_ENCRYPTION_KEYS: RING_12 });
    const before = await reencryptBoth(RING_12, true);
    const left = Object.fromEntries(before.map((r) => [r.target, r.remaining]));
    expect(left).toMatchObject({
      'compute.triggers': 2,
      'compute.endpoint_credentials': 1,
      'compute.drafts': 1,
      'inbound.inbound_events': 2,
      'orchestration.orchestrations': 1,
      'orchestration.orchestration_versions': 1,
    });
    expect(left['compute.trigger_versions']).toBe(3);
    expect(left['compute.runs']).toBe(2);

    const moved = await reencryptBoth(RING_12);
    expect(remaining(moved)).toBe(0);
    for (const r of moved) expect(r.unreadable).toEqual([]);
    const checked = await reencryptBoth(RING_2, true);
    expect(remaining(checked)).toBe(0);
    for (const r of checked) expect(r.unreadable).toEqual([]);
    const { rows } = await db.query<{ t: string }>(`
      SELECT metadata::text AS t FROM compute.triggers
      UNION ALL SELECT metadata::text FROM compute.trigger_versions
      UNION ALL SELECT params FROM compute.runs
      UNION ALL SELECT coalesce(signing_secret, '') FROM compute.endpoint_credentials
      UNION ALL SELECT data::text FROM compute.drafts
      UNION ALL SELECT payload || headers FROM inbound.inbound_events`);
    for (const { t } of rows) expect(t).not.toMatch(/sv1\.1\./);

    // Key 1 leaves: the sealed values still open through the API.
    await stack.restartCompute({ STRATA_ENCRYPTION_KEYS: RING_2 });
    await stack.restartInbound({ STRATA_ENCRYPTION_KEYS: RING_2 });
    const got = await call('GET', `${base()}/function-triggers/${trigger.body.id}`, { token });
    expect(got.body.triggerMetadata.params.token).toMatchObject({ encrypted: true, keyVersion: 2 });
    // The sealed form sent back is kept only if it opens for this trigger: it does, under key 2.
    const kept = await call('PUT', `${base()}/function-triggers/${trigger.body.id}`, {
      token,
      body: { triggerMetadata: got.body.triggerMetadata },
    });
    expect(kept.status).toBe(200);
    const detail = await call('GET', `${base()}/inbound-events/${arrival.body.inboundEventId}`, { token });
    expect(detail.body.data.body).toEqual({ paid: 42 });
    const rotated = await call('POST', `${base()}/function-triggers/${endpoint.body.id}/rotate-credentials`, {
      token,
      body: {},
    });
    expect(rotated.status).toBe(200);
    // The draft's secret opens under key 2 when it is published.
    const published = await call('POST', `${base()}/function-triggers/${draft.body.id}/publish`, { token });
    expect(published).toMatchObject({
      status: 201,
      body: { triggerMetadata: { params: { token: { keyVersion: 2 } } } },
    });
  });
});
