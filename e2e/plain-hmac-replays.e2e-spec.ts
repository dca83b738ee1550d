import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { eventually, ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * A request signed with a plain HMAC-SHA256 of its body (GitHub's style: no timestamp,
 * no delivery id) verifies forever. Whoever saw one (a log, a proxy, the provider's
 * delivery page) could send it again and have it captured and run again, or start
 * another orchestration run, as often as they liked. Now its signature is claimed for a
 * window, on every replica: a copy within the window, however its header spells the
 * signature, is answered as the first request was, and nothing is captured or run twice.
 */
const WINDOW_S = 3600;
const suffix = Date.now().toString(36);
const ws = `hmac-${suffix}`;
const SECRET = 'plain-hmac-secret';
let stack: Stack;
let token: string;
let db: pg.Client;
type Replica = Awaited<ReturnType<Stack['startInboundReplica']>>;
const replicas: Replica[] = [];
const inboundClock = new ManualClock();
const orchestrationClock = new ManualClock();

const dataBase = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const orchBase = () => `${stack.baseUrl}/orchestration/ws/${ws}/api/v1`;
const mac = (body: string) => createHmac('sha256', SECRET).update(body).digest();
/** The same 32 bytes, spelled every way the check accepts. */
const spellings = (body: string) => [
  `sha256=${mac(body).toString('hex')}`,
  `sha256=${mac(body).toString('hex').toUpperCase()}`,
  mac(body).toString('hex'),
  mac(body).toString('base64'),
  `sha256=${mac(body).toString('base64url')}`,
];

/** Where a replica started by the test listens (not behind the gateway). */
const urlOf = (app: Replica) => `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;

const post = (url: string, body: string, signature: string, header = 'x-hub-signature-256') =>
  call('POST', url, { body, headers: { 'content-type': 'application/json', [header]: signature } });

beforeAll(async () => {
  stack = await startStack(
    {
      INBOUND_HMAC_REPLAY_WINDOW_S: String(WINDOW_S),
      ORCHESTRATION_HMAC_REPLAY_WINDOW_S: String(WINDOW_S),
      // The sweeps come often, so a claim past its window is seen going.
      INBOUND_SWEEP_INTERVAL_MS: '100',
    },
    { clocks: { inbound: inboundClock, orchestration: orchestrationClock } },
  );
  token = await adminWorkspaceToken(stack, ws);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  for (const replica of replicas) await replica.close();
  await stack?.stop();
});

describe('inbound: a plain HMAC arrival sent again', () => {
  let triggerId: string;
  const url = () => `${dataBase()}/http-trigger/github`;
  const arrivals = async () =>
    (await call('GET', `${dataBase()}/inbound-events?limit=100&triggerId=${triggerId}`, { token })).body.data as {
      id: string;
    }[];

  beforeAll(async () => {
    const fn = await call('POST', `${dataBase()}/compute-functions`, {
      token,
      body: { name: 'on-push', code: 'async function run() { return { success: true }; }' },
    });
    expect(fn.status).toBe(201);
    const trigger = await call('POST', `${dataBase()}/function-triggers`, {
      token,
      body: {
        name: 'github',
        functionId: fn.body.id,
        executionType: 'http-trigger',
        triggerMetadata: {
          path: 'github',
          validateSignature: true,
          signingSecret: SECRET,
          signatureHeaderName: 'X-Hub-Signature-256',
        },
      },
    });
    expect(trigger.status).toBe(201);
    triggerId = trigger.body.id;
  });

  it('is answered as the first arrival, once per signature whatever its spelling, on every replica', async () => {
    const body = JSON.stringify({ action: 'opened', number: 1 });
    const first = await post(url(), body, spellings(body)[0]!);
    expect(first.status).toBe(202);
    const answer = {
      executionId: first.body.executionId,
      inboundEventId: first.body.inboundEventId,
      correlationId: first.body.correlationId,
    };
    // Sent again in each spelling, and five copies at once (one store batch).
    for (const signature of spellings(body)) {
      const again = await post(url(), body, signature);
      expect({ status: again.status, ...again.body }).toMatchObject({ status: 202, ...answer });
    }
    const burst = await Promise.all([1, 2, 3, 4, 5].map(() => post(url(), body, spellings(body)[2]!)));
    for (const again of burst)
      expect({ status: again.status, ...again.body }).toMatchObject({ status: 202, ...answer });
    // Another replica answers the same: the claim is in PostgreSQL, not in a replica's memory.
    const replica = await stack.startInboundReplica();
    replicas.push(replica);
    const replicaUrl = `${urlOf(replica)}/data/workspace/${ws}/api/v1/http-trigger/github`;
    const there = await post(replicaUrl, body, spellings(body)[3]!);
    expect({ status: there.status, ...there.body }).toMatchObject({ status: 202, ...answer });

    expect((await arrivals()).map((a) => a.id)).toEqual([first.body.inboundEventId]);
    const runs = await db.query('SELECT count(*)::int AS n FROM compute.runs WHERE job_id = $1', [
      first.body.executionId,
    ]);
    expect(runs.rows[0].n).toBeLessThanOrEqual(1);
    const jobs = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM inbound.inbound_events WHERE trigger_id = $1`,
      [triggerId],
    );
    expect(jobs.rows[0]!.n).toBe(1);

    // Another body is another signature: captured on its own.
    const other = JSON.stringify({ action: 'closed', number: 1 });
    const second = await post(url(), other, spellings(other)[0]!);
    expect(second.status).toBe(202);
    expect(second.body.inboundEventId).not.toBe(first.body.inboundEventId);
    // A signature that does not verify claims nothing and is refused as before.
    expect((await post(url(), body, `sha256=${'0'.repeat(64)}`)).status).toBe(401);
  });

  it('is captured again once the window has passed (the documented limit), and the old claim is swept', async () => {
    const body = JSON.stringify({ action: 'labeled', number: 2 });
    const first = await post(url(), body, spellings(body)[0]!);
    expect(first.status).toBe(202);
    inboundClock.advance(WINDOW_S * 1000 - 1);
    expect((await post(url(), body, spellings(body)[1]!)).body.inboundEventId).toBe(first.body.inboundEventId);
    inboundClock.advance(1);
    const later = await post(url(), body, spellings(body)[1]!);
    expect(later.status).toBe(202);
    expect(later.body.inboundEventId).not.toBe(first.body.inboundEventId);
    // The new capture holds the signature for a window of its own.
    expect((await post(url(), body, spellings(body)[4]!)).body.inboundEventId).toBe(later.body.inboundEventId);
    const claims = () =>
      db
        .query<{ inbound_event_id: string }>(
          'SELECT inbound_event_id FROM inbound.signature_claims WHERE workspace_slug = $1 ORDER BY claimed_at',
          [ws],
        )
        .then((r) => r.rows.map((row) => row.inbound_event_id));
    expect(await claims()).toContain(later.body.inboundEventId);
    // Past every window, the sweep deletes the claims: nothing is kept for good.
    inboundClock.advance(WINDOW_S * 1000);
    expect(await eventually(async () => ((await claims()).length === 0 ? true : undefined), 20_000, 50)).toBe(true);
  });
});

describe('orchestration: a plain HMAC webhook sent again', () => {
  let orchestrationId: string;
  const url = () => `${orchBase()}/webhooks/pushed`;
  const runsOf = async () =>
    (await call('GET', `${orchBase()}/orchestrations/${orchestrationId}/runs?pageSize=100`, { token })).body.data as {
      id: string;
    }[];

  beforeAll(async () => {
    const made = await call('POST', `${orchBase()}/orchestrations`, {
      token,
      body: {
        slug: 'pushed',
        name: 'Pushed',
        status: 'active',
        trigger: { type: 'http-trigger', path: 'pushed', validateSignature: true, signingSecret: SECRET },
        steps: [{ id: 'pause', type: 'delay', delayMs: 1 }],
      },
    });
    expect(made.status).toBe(201);
    orchestrationId = made.body.id;
  });

  it('is answered with the first run and starts no other, whatever the spelling, on every replica', async () => {
    const body = JSON.stringify({ ref: 'main', n: 1 });
    const first = await post(url(), body, spellings(body)[0]!, 'x-signature');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ runId: expect.stringMatching(/^orun_/), status: 'pending' });
    for (const signature of spellings(body)) {
      const again = await post(url(), body, signature, 'x-signature');
      expect({ status: again.status, runId: again.body.runId }).toEqual({ status: 200, runId: first.body.runId });
    }
    const byId = await post(
      `${orchBase()}/orchestrations/${orchestrationId}/webhook`,
      body,
      spellings(body)[1]!,
      'x-signature',
    );
    expect(byId.body.runId).toBe(first.body.runId);
    const burst = await Promise.all([1, 2, 3, 4, 5].map(() => post(url(), body, spellings(body)[3]!, 'x-signature')));
    expect(new Set(burst.map((b) => b.body.runId))).toEqual(new Set([first.body.runId]));
    const replica = await stack.startOrchestrationReplica();
    replicas.push(replica);
    const replicaUrl = `${urlOf(replica)}/orchestration/ws/${ws}/api/v1/webhooks/pushed`;
    const there = await post(replicaUrl, body, spellings(body)[4]!, 'x-signature');
    expect({ status: there.status, runId: there.body.runId }).toEqual({ status: 200, runId: first.body.runId });
    expect((await runsOf()).map((r) => r.id)).toEqual([first.body.runId]);

    // Paused since: the replay is still answered with its run (as a Standard Webhooks retry is), a new body refused.
    await call('PUT', `${orchBase()}/orchestrations/${orchestrationId}`, { token, body: { status: 'paused' } });
    expect((await post(url(), body, spellings(body)[0]!, 'x-signature')).body.runId).toBe(first.body.runId);
    const fresh = JSON.stringify({ ref: 'main', n: 2 });
    expect((await post(url(), fresh, spellings(fresh)[0]!, 'x-signature')).status).toBe(409);
    await call('PUT', `${orchBase()}/orchestrations/${orchestrationId}`, { token, body: { status: 'active' } });
  });

  it('starts a run again once the window has passed (the documented limit)', async () => {
    const body = JSON.stringify({ ref: 'release', n: 3 });
    const first = await post(url(), body, spellings(body)[0]!, 'x-signature');
    expect(first.status).toBe(200);
    orchestrationClock.advance(WINDOW_S * 1000 - 1);
    expect((await post(url(), body, spellings(body)[2]!, 'x-signature')).body.runId).toBe(first.body.runId);
    orchestrationClock.advance(1);
    const later = await post(url(), body, spellings(body)[2]!, 'x-signature');
    expect(later.status).toBe(200);
    expect(later.body.runId).not.toBe(first.body.runId);
    expect((await post(url(), body, spellings(body)[0]!, 'x-signature')).body.runId).toBe(later.body.runId);
    const ids = (await runsOf()).map((r) => r.id);
    expect(ids.filter((id) => id === first.body.runId || id === later.body.runId)).toHaveLength(2);
  });
});
