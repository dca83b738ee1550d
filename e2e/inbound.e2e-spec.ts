import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, serviceAccountToken, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const suffix = Date.now().toString(36);
const ws = `inb-${suffix}`;
const otherWs = `inb-other-${suffix}`;
let token: string;
let otherToken: string;
const triggers: Record<string, string> = {};
const STANDARD_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const GITHUB_SECRET = 'github-shared-secret';

const base = (workspace = ws) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
const CODE = `async function run() {
  await api.createRecord('deliveries', { n: executionParams.body && executionParams.body.n });
  return { success: true, data: { body: executionParams.body, headers: executionParams.headers, inboundEventId: executionParams.inboundEventId } };
}`;

function standardHeaders(
  body: string,
  secret = STANDARD_SECRET,
  at = Math.floor(Date.now() / 1000),
  id = `msg_${randomBytes(8).toString('hex')}`,
) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': `v1,${signature}` };
}

const send = (path: string, body: string, headers: Record<string, string> = {}, legacy = false) =>
  call('POST', `${base()}/${legacy ? 'webhook' : 'http-trigger'}/${path}`, {
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });

/** The run of a job once it is final. */
function finished(jobId: string): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const listed = await call('GET', `${base()}/function-runs?jobId=${jobId}`, { token });
      const r = listed.body.runs?.[0];
      if (!r || ['queued', 'running'].includes(r.status)) return undefined;
      return (await call('GET', `${base()}/function-runs/${r.id}`, { token })).body as Record<string, any>;
    },
    45_000,
    50,
  );
}

async function eventRow(id: string): Promise<Record<string, any>> {
  const listed = await call('GET', `${base()}/inbound-events?limit=100`, { token });
  return listed.body.data.find((e: { id: string }) => e.id === id);
}

function settled(id: string): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const row = await eventRow(id);
      return row && row.dispatchStatus !== 'received' && row.dispatchStatus !== 'queued' ? row : undefined;
    },
    20_000,
    50,
  );
}

beforeAll(async () => {
  stack = await startStack({ INBOUND_MAX_BODY_BYTES: '4096' });
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
  const structure = await call('POST', `${base()}/structures`, {
    token,
    body: { name: 'Deliveries', recordSlug: 'deliveries', properties: [{ name: 'n', type: 'number' }] },
  });
  expect(structure.status).toBeLessThan(300);
  const fn = await call('POST', `${base()}/compute-functions`, { token, body: { name: 'on-hook', code: CODE } });
  expect(fn.status).toBe(201);
  const make = async (name: string, metadata: Record<string, unknown>) => {
    const created = await call('POST', `${base()}/function-triggers`, {
      token,
      body: {
        name,
        functionId: fn.body.id,
        executionType: 'http-trigger',
        triggerMetadata: { path: name, ...metadata },
      },
    });
    expect(created.status).toBe(201);
    triggers[name] = created.body.id;
  };
  await make('stripe', { validateSignature: true, signingSecret: { value: STANDARD_SECRET, encrypt: true } });
  await make('github', {
    validateSignature: true,
    signingSecret: GITHUB_SECRET,
    signatureHeaderName: 'X-Hub-Signature-256',
  });
  await make('open', {});
  await make('kept', { validateSignature: true, signingSecret: 'kept-secret', captureRejected: true });
});

afterAll(async () => {
  await stack?.stop();
});

describe('inbound capture', () => {
  let stripeEvent: string;

  it('accepts a Standard Webhooks arrival with 202 and runs the function with its body and headers', async () => {
    const body = JSON.stringify({ n: 1, type: 'invoice.paid' });
    const answered = await send('stripe', body, { ...standardHeaders(body), 'x-correlation-id': 'corr-1' });
    expect(answered.status).toBe(202);
    expect(answered.body).toEqual({
      executionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      inboundEventId: expect.stringMatching(/^ievt_/),
      correlationId: 'corr-1',
      dispatchStatus: 'received',
    });
    stripeEvent = answered.body.inboundEventId;
    const run = await finished(answered.body.executionId);
    expect(run).toMatchObject({ status: 'succeeded', executionSource: 'http-trigger', triggerId: triggers['stripe'] });
    expect(run.result.data.body).toEqual({ n: 1, type: 'invoice.paid' });
    expect(run.result.data.headers['webhook-id']).toEqual(expect.any(String));
    expect(run.result.data.inboundEventId).toBe(stripeEvent);
    expect(await settled(stripeEvent)).toMatchObject({
      signatureResult: 'verified',
      signatureScheme: 'standard-webhooks',
      dispatchStatus: 'dispatched',
      runId: run.id,
      correlationId: 'corr-1',
      sourceName: 'stripe',
    });
    expect(run.executionContext.environment.limits.wallMs).toBe(300_000);

    // A re-run repeats the arrival's run with the same time budget: an HTTP trigger's 5 minutes.
    const rerun = await call('POST', `${base()}/function-runs/${run.id}/rerun`, { token, body: { reason: 'again' } });
    expect(rerun.status).toBe(200);
    const again = await finished(rerun.body.jobId);
    expect(again).toMatchObject({ status: 'succeeded', executionSource: 'rerun', originalRunId: run.id });
    expect(again.result.data.body).toEqual({ n: 1, type: 'invoice.paid' });
    expect(again.executionContext.environment.limits).toMatchObject({
      wallMs: 300_000,
      cpuMs: run.executionContext.environment.limits.cpuMs,
    });
  });

  it('refuses wrong and stale Standard Webhooks signatures with 401 and keeps nothing', async () => {
    const body = JSON.stringify({ n: 2 });
    const wrong = await send('stripe', body, standardHeaders(body, `whsec_${randomBytes(24).toString('base64')}`));
    expect(wrong.status).toBe(401);
    const stale = await send(
      'stripe',
      body,
      standardHeaders(body, STANDARD_SECRET, Math.floor(Date.now() / 1000) - 3600),
    );
    expect(stale.status).toBe(401);
    expect(stale.body.error).toContain('webhook-timestamp');
    const unsigned = await send('stripe', body);
    expect(unsigned.status).toBe(401);
    const listed = await call('GET', `${base()}/inbound-events?triggerId=${triggers['stripe']}`, { token });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([stripeEvent]);
  });

  it('captures a Standard Webhooks delivery once: the same webhook-id again, signed anew, answers the first arrival', async () => {
    const body = JSON.stringify({ n: 7, type: 'invoice.retried' });
    const id = `msg_${randomBytes(8).toString('hex')}`;
    const now = Math.floor(Date.now() / 1000);
    const first = await send('stripe', body, {
      ...standardHeaders(body, STANDARD_SECRET, now - 30, id),
      'x-correlation-id': 'corr-retry',
    });
    expect(first.status).toBe(202);
    // The provider's retries (a lost 202), each with a fresh timestamp and signature, one of them at once.
    const [again, later] = await Promise.all([
      send('stripe', body, standardHeaders(body, STANDARD_SECRET, now - 10, id)),
      send('stripe', body, standardHeaders(body, STANDARD_SECRET, now, id)),
    ]);
    for (const answered of [again, later]) {
      expect(answered.status).toBe(202);
      expect(answered.body).toMatchObject({
        executionId: first.body.executionId,
        inboundEventId: first.body.inboundEventId,
        correlationId: 'corr-retry',
      });
    }
    const run = await finished(first.body.executionId);
    expect(run.result.data.body).toEqual({ n: 7, type: 'invoice.retried' });
    const listed = await call('GET', `${base()}/inbound-events?limit=100&triggerId=${triggers['stripe']}`, { token });
    const captured = listed.body.data.filter((e: { correlationId: string }) => e.correlationId === 'corr-retry');
    expect(captured).toHaveLength(1);
    // Another trigger may see the same id: it is its own delivery there.
    const other = await send('open', body, { 'webhook-id': id });
    expect(other.status).toBe(202);
    expect(other.body.inboundEventId).not.toBe(first.body.inboundEventId);
  });

  it('accepts a plain HMAC-SHA256 of the raw body in the trigger’s header (GitHub style), and refuses a wrong one', async () => {
    const body = JSON.stringify({ n: 3, action: 'opened' });
    const digest = createHmac('sha256', GITHUB_SECRET).update(body).digest('hex');
    const ok = await send('github', body, { 'x-hub-signature-256': `sha256=${digest}` });
    expect(ok.status).toBe(202);
    expect(await settled(ok.body.inboundEventId)).toMatchObject({
      signatureResult: 'verified',
      signatureScheme: 'hmac-sha256',
    });
    const bad = await send('github', body, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` });
    expect(bad.status).toBe(401);
  });

  it('keeps unsigned arrivals of a trigger that does not validate, and rejected ones only when asked', async () => {
    const open = await send('open', JSON.stringify({ n: 4 }));
    expect(open.status).toBe(202);
    expect(await settled(open.body.inboundEventId)).toMatchObject({
      signatureResult: 'unsigned',
      dispatchStatus: 'dispatched',
    });

    const rejected = await send('kept', JSON.stringify({ n: 5 }), { 'x-signature': 'f'.repeat(64) });
    expect(rejected.status).toBe(401);
    const kept = await call('GET', `${base()}/inbound-events?signatureResult=rejected`, { token });
    expect(kept.body.data).toHaveLength(1);
    expect(kept.body.data[0]).toMatchObject({
      triggerId: triggers['kept'],
      dispatchStatus: 'dropped_dispatch',
      runId: null,
    });
    const replay = await call('POST', `${base()}/inbound-events/${kept.body.data[0].id}/replay`, { token });
    expect(replay.status).toBe(409);
  });

  it('answers the legacy /webhook/{path} with the deprecation headers', async () => {
    const answered = await send('open', JSON.stringify({ n: 6 }), {}, true);
    expect(answered.status).toBe(202);
    expect(answered.headers.get('deprecation')).toBe('true');
    expect(answered.headers.get('sunset')).toEqual(expect.any(String));
    expect(answered.headers.get('link')).toContain(`/data/workspace/${ws}/api/v1/http-trigger/open`);
  });

  it('404 for an unknown path, 413 past the body limit', async () => {
    expect((await send('nothing-here', '{}')).status).toBe(404);
    const big = await send('open', JSON.stringify({ x: 'y'.repeat(5000) }));
    expect(big.status).toBe(413);
  });

  it('answers a percent-encoded path (the full route) exactly as the plain one (the direct route)', async () => {
    const plain = await send('open', JSON.stringify({ n: 7 }));
    const encoded = await send('op%65n', JSON.stringify({ n: 8 }));
    for (const answered of [plain, encoded]) {
      expect(answered.status).toBe(202);
      expect(Object.keys(answered.body).sort()).toEqual(
        ['correlationId', 'dispatchStatus', 'executionId', 'inboundEventId'].sort(),
      );
      expect(answered.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answered.headers.get('x-request-id')).toEqual(expect.any(String));
    }
    const missing = [await send('nothing-here', '{}'), await send('nothing%2Dhere', '{}')];
    for (const answered of missing) {
      expect(answered.status).toBe(404);
      expect(answered.body).toEqual({ error: 'No http-trigger at /http-trigger/nothing-here.', statusCode: 404 });
      expect(answered.headers.get('x-request-id')).toEqual(expect.any(String));
    }
    const given = await call('POST', `${base()}/http-trigger/open`, {
      body: '{}',
      headers: { 'content-type': 'application/json', 'x-request-id': 'caller-request-0001' },
    });
    expect(given.headers.get('x-request-id')).toBe('caller-request-0001');
  });

  it('lists with every filter, never with bodies or headers, and answers 400 for bad filters', async () => {
    const all = await call('GET', `${base()}/inbound-events`, { token });
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ total: all.body.data.length, limit: 50, offset: 0 });
    for (const row of all.body.data) {
      expect(row).not.toHaveProperty('payload');
      expect(row).not.toHaveProperty('headers');
      expect(row).not.toHaveProperty('body');
    }
    expect(JSON.stringify(all.body)).not.toContain('invoice.paid');

    const byTrigger = await call('GET', `${base()}/inbound-events?triggerId=${triggers['github']}`, { token });
    expect(byTrigger.body.data.every((e: { triggerId: string }) => e.triggerId === triggers['github'])).toBe(true);
    const verified = await call('GET', `${base()}/inbound-events?signatureResult=verified`, { token });
    expect(verified.body.data.every((e: { signatureResult: string }) => e.signatureResult === 'verified')).toBe(true);
    const dropped = await call('GET', `${base()}/inbound-events?dispatchStatus=dropped_dispatch`, { token });
    expect(dropped.body.meta.total).toBe(1);
    const future = await call('GET', `${base()}/inbound-events?since=2099-01-01T00:00:00Z`, { token });
    expect(future.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    const past = await call('GET', `${base()}/inbound-events?until=2000-01-01T00:00:00Z`, { token });
    expect(past.body.meta.total).toBe(0);
    const page = await call('GET', `${base()}/inbound-events?limit=1&offset=1`, { token });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.data[0].id).toBe(all.body.data[1].id);
    expect((await call('GET', `${base()}/inbound-events?limit=500`, { token })).body.meta.limit).toBe(100);
    expect((await call('GET', `${base()}/inbound-events?limit=0`, { token })).body.meta.limit).toBe(1);

    for (const bad of [
      'signatureResult=maybe',
      'dispatchStatus=lost',
      'triggerId=not-a-uuid',
      'since=yesterday',
      'until=2026-13-45',
      'offset=-1',
      'limit=ten',
    ]) {
      const refused = await call('GET', `${base()}/inbound-events?${bad}`, { token });
      expect([bad, refused.status]).toEqual([bad, 400]);
    }
    // A limit out of range is clamped, so the refusal of one that is no number says so.
    const word = await call('GET', `${base()}/inbound-events?limit=abc`, { token });
    expect(word.body.details).toEqual([
      { field: 'limit', message: 'limit must be an integer (it is clamped to 1-100)' },
    ]);
    const inverted = await call(
      'GET',
      `${base()}/inbound-events?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z`,
      {
        token,
      },
    );
    expect(inverted.body.details).toEqual([{ field: 'since', message: 'must not be after until' }]);
  });

  it('shows an arrival’s body and masked headers only to a caller who may reveal secrets', async () => {
    const body = JSON.stringify({ n: 7 });
    const answered = await send('open', body, { authorization: 'Bearer provider-token' });
    const id = answered.body.inboundEventId;
    const detail = await call('GET', `${base()}/inbound-events/${id}`, { token });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ id, body: { n: 7 } });
    expect(detail.body.data.headers.authorization).toBe('********');
    const reader = await serviceAccountToken(stack, ws, token, {
      name: 'hook-reader',
      resource: 'function-triggers',
      actions: ['retrieve'],
    });
    const redacted = await call('GET', `${base()}/inbound-events/${id}`, { token: reader });
    expect(redacted.body.data).toMatchObject({ id, payloadRedacted: true });
    expect(redacted.body.data).not.toHaveProperty('body');
    expect((await call('GET', `${base()}/inbound-events/ievt_nope`, { token })).status).toBe(404);
    // Not stored in the clear.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT payload, headers FROM inbound.inbound_events WHERE id = $1', [id]);
      expect(rows[0].payload).not.toContain('"n"');
      expect(rows[0].headers).not.toContain('provider-token');
    } finally {
      await db.end();
    }
  });

  it('replays an arrival: a new arrival, the same body, the function run again (side effects repeat)', async () => {
    const deliveries = async () =>
      (await call('GET', `${base()}/records/slug/deliveries?limit=100`, { token })).body.results.length as number;
    const before = await deliveries();
    const replay = await call('POST', `${base()}/inbound-events/${stripeEvent}/replay`, { token });
    expect(replay.status).toBe(202);
    expect(replay.body.data).toMatchObject({
      inboundEventId: expect.stringMatching(/^ievt_/),
      correlationId: 'corr-1',
      replayedFrom: stripeEvent,
      dispatchStatus: 'queued',
    });
    expect(replay.body.data.inboundEventId).not.toBe(stripeEvent);
    const run = await finished(replay.body.data.executionId);
    expect(run.result.data.body).toEqual({ n: 1, type: 'invoice.paid' });
    const replayed = await settled(replay.body.data.inboundEventId);
    expect(replayed).toMatchObject({ signatureResult: 'verified', replayedFrom: stripeEvent });
    // The replay wrote its record again: replays repeat side effects, as the spec warns.
    expect(await deliveries()).toBe(before + 1);
    expect((await call('POST', `${base()}/inbound-events/ievt_0000000000NOTTHERE00/replay`, { token })).status).toBe(
      404,
    );
  });

  it('auto-persists verified arrivals as records before dispatch; a failure is recorded and does not block the run', async () => {
    const fnId = (await call('GET', `${base()}/compute-functions?search=on-hook`, { token })).body.functions[0].id;
    const create = (name: string, recordSlug: string) =>
      call('POST', `${base()}/function-triggers`, {
        token,
        body: {
          name,
          functionId: fnId,
          executionType: 'http-trigger',
          triggerMetadata: {
            path: name,
            validateSignature: true,
            signingSecret: 'persist-secret',
            autoPersist: { enabled: true, recordSlug },
          },
        },
      });
    const unknown = await create('persist-nowhere', 'no-such-collection');
    expect(unknown.status).toBe(400);
    expect(unknown.body.details[0].field).toBe('triggerMetadata.autoPersist.recordSlug');
    const created = await create('persisted', 'deliveries');
    expect(created.status).toBe(201);
    expect(created.body.triggerMetadata.autoPersist).toEqual({
      enabled: true,
      recordSlug: 'deliveries',
      collectionId: expect.any(String),
    });

    const sign = (body: string) => ({
      'x-signature': createHmac('sha256', 'persist-secret').update(body).digest('hex'),
    });
    const good = JSON.stringify({ n: 41 });
    const ok = await send('persisted', good, sign(good));
    expect(ok.status).toBe(202);
    const row = await settled(ok.body.inboundEventId);
    expect(row).toMatchObject({
      persistStatus: 'succeeded',
      persistedRecordId: expect.any(String),
      dispatchStatus: 'dispatched',
    });
    const record = await call('GET', `${base()}/records/${row.persistedRecordId}`, { token });
    expect(record.body.data).toEqual({ n: 41 });

    const invalid = JSON.stringify({ n: 'not a number' });
    const failed = await send('persisted', invalid, sign(invalid));
    const failedRow = await settled(failed.body.inboundEventId);
    expect(failedRow).toMatchObject({ persistStatus: 'failed', persistedRecordId: null, dispatchStatus: 'dispatched' });
    expect(failedRow.persistError).toContain('400');

    // The link is immutable: another collection is refused; an update without the block clears it.
    const relink = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: {
        triggerMetadata: {
          path: 'persisted',
          validateSignature: true,
          signingSecret: 'persist-secret',
          autoPersist: { enabled: true, recordSlug: 'other' },
        },
      },
    });
    expect(relink.status).toBe(400);
    const cleared = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { triggerMetadata: { path: 'persisted', validateSignature: true, signingSecret: 'persist-secret' } },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.triggerMetadata.autoPersist).toBeUndefined();
    // No record any more: `skipped` when the arrival came while inbound still held the trigger's old settings
    // (INBOUND_TRIGGER_CACHE_MS), none at all once it has the new ones. (A body of its own: the same signed body
    // again would be a replay within INBOUND_HMAC_REPLAY_WINDOW_S, answered with the first arrival.)
    const next = JSON.stringify({ n: 42 });
    const after = await send('persisted', next, sign(next));
    expect(after.body.inboundEventId).not.toBe(ok.body.inboundEventId);
    const afterRow = await settled(after.body.inboundEventId);
    expect([null, 'skipped']).toContain(afterRow.persistStatus);
    expect(afterRow.persistedRecordId).toBeNull();
  });

  it('a dry run says what a replay would run and runs nothing', async () => {
    const before = (await call('GET', `${base()}/inbound-events`, { token })).body.meta.total;
    const unclear = await call('POST', `${base()}/inbound-events/${stripeEvent}/replay?dryRun=yes`, { token });
    expect(unclear.status).toBe(400);
    expect(JSON.stringify(unclear.body)).toContain('dryRun must be true or false');
    const dry = await call('POST', `${base()}/inbound-events/${stripeEvent}/replay?dryRun=true`, { token });
    expect(dry.status).toBe(200);
    expect(dry.body.data).toEqual({
      dryRun: true,
      inboundEventId: stripeEvent,
      signatureResult: 'verified',
      wouldRun: {
        triggerId: triggers['stripe'],
        triggerName: 'stripe',
        paused: false,
        functionId: expect.any(String),
        functionVersion: 1,
        autoPersist: null,
      },
    });
    expect((await call('GET', `${base()}/inbound-events`, { token })).body.meta.total).toBe(before);
    expect((await call('POST', `${base()}/inbound-events/${stripeEvent}/replay?dryRun=maybe`, { token })).status).toBe(
      400,
    );
  });

  it('replays many arrivals matching a trigger, capped, and says how many were queued', async () => {
    const refused = await call('POST', `${base()}/inbound-events/replay`, { token, body: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.details[0].field).toBe('triggerId');
    expect(
      (
        await call('POST', `${base()}/inbound-events/replay`, {
          token,
          body: { triggerId: triggers['github'], limit: 500 },
        })
      ).status,
    ).toBe(400);
    const originals = (await call('GET', `${base()}/inbound-events?triggerId=${triggers['github']}`, { token })).body
      .data;
    const bulk = await call('POST', `${base()}/inbound-events/replay`, {
      token,
      body: { triggerId: triggers['github'], limit: 10 },
    });
    expect(bulk.status).toBe(202);
    expect(bulk.body.data).toMatchObject({ matched: originals.length, queued: originals.length, dropped: 0 });
    for (const replay of bulk.body.data.replays) {
      expect(replay).toMatchObject({ inboundEventId: expect.stringMatching(/^ievt_/), dispatchStatus: 'queued' });
      expect((await settled(replay.inboundEventId)).dispatchStatus).toBe('dispatched');
    }
  });

  it('keeps workspaces apart: another workspace neither lists nor replays these arrivals', async () => {
    expect((await call('GET', `${base()}/inbound-events`, { token: otherToken })).status).toBe(403);
    const own = await call('GET', `${base(otherWs)}/inbound-events`, { token: otherToken });
    expect(own.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    const replay = await call('POST', `${base(otherWs)}/inbound-events/${stripeEvent}/replay`, { token: otherToken });
    expect(replay.status).toBe(404);
    expect((await call('GET', `${base(otherWs)}/inbound-events/${stripeEvent}`, { token: otherToken })).status).toBe(
      404,
    );
  });

  it('a burst of arrivals is stored and dispatched in batches: every one gets its own run, once', async () => {
    const bodies = Array.from({ length: 40 }, (_, i) => JSON.stringify({ n: 100 + i, action: 'burst' }));
    const answers = await Promise.all(
      bodies.map((body) =>
        send('github', body, {
          'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 202));
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const ids = answers.map((a) => a.body.inboundEventId as string);
      const rows = await eventually(
        async () => {
          const { rows } = await db.query<{ id: string; dispatch_status: string; run_id: string; job_id: string }>(
            'SELECT id, dispatch_status, run_id, job_id FROM inbound.inbound_events WHERE id = ANY($1)',
            [ids],
          );
          return rows.length === ids.length && rows.every((r) => r.dispatch_status === 'dispatched') ? rows : undefined;
        },
        30_000,
        50,
      );
      expect(new Set(rows.map((r) => r.run_id)).size).toBe(ids.length);
      const runs = await db.query<{ job_id: string; n: number }>(
        'SELECT job_id, count(*)::int AS n FROM compute.runs WHERE job_id = ANY($1) GROUP BY job_id',
        [rows.map((r) => r.job_id)],
      );
      expect(runs.rows).toHaveLength(ids.length);
      expect(runs.rows.every((r) => r.n === 1)).toBe(true);
      // Dispatched arrivals are off the sweep's list (the dispatch's record removed them, in its statement).
      const listed = await db.query('SELECT count(*)::int AS n FROM inbound.undispatched_events WHERE id = ANY($1)', [
        ids,
      ]);
      expect(listed.rows[0].n).toBe(0);
      // Each run got its own arrival's body.
      const one = await finished(rows.find((r) => r.id === ids[7])!.job_id);
      expect(one['status']).toBe('succeeded');
    } finally {
      await db.end();
    }
  });

  it('a batch naming one arrival twice queues one run, and answers both with it', async () => {
    const body = JSON.stringify({ n: 7, action: 'twice' });
    const sent = await send('github', body, {
      'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
    });
    const row = await settled(sent.body.inboundEventId);
    const nc = await connect({ servers: '127.0.0.1:4222' });
    try {
      const again = {
        triggerId: triggers['github'],
        inboundEventId: row['id'],
        correlationId: row['correlationId'],
        jobId: sent.body.executionId,
        executionParams: { body: { n: 7 } },
      };
      const reply = await nc.request(
        `${stack.natsPrefix}.compute.http-triggers.dispatch-batch`,
        JSON.stringify({ workspaceSlug: ws, dispatches: [again, again] }),
        { timeout: 10_000 },
      );
      const { replies } = reply.json<{ replies: { status: string; runId: string }[] }>();
      expect(replies).toEqual([
        { status: 'dispatched', runId: row['runId'], jobId: sent.body.executionId },
        { status: 'dispatched', runId: row['runId'], jobId: sent.body.executionId },
      ]);
    } finally {
      await nc.close();
    }
  });

  it('dispatches an arrival left received by a crash, once: the sweep finds it and compute does not run it twice', async () => {
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      // What a crash right after the store leaves: the arrival `received`, on the sweep's list, never dispatched.
      const { rows } = await db.query(
        `WITH reset AS (
           UPDATE inbound.inbound_events SET dispatch_status = 'received', run_id = NULL, dispatched_at = NULL,
                  received_at = now() - interval '1 hour'
            WHERE id = $1 RETURNING id, workspace_slug, received_at, job_id),
         listed AS (INSERT INTO inbound.undispatched_events SELECT id, workspace_slug, received_at FROM reset)
         SELECT job_id FROM reset`,
        [stripeEvent],
      );
      await stack.restartInbound({ INBOUND_REDISPATCH_AFTER_MS: '100', INBOUND_SWEEP_INTERVAL_MS: '100' });
      const row = await settled(stripeEvent);
      expect(row.dispatchStatus).toBe('dispatched');
      const runs = await db.query('SELECT count(*)::int AS n FROM compute.runs WHERE job_id = $1', [rows[0].job_id]);
      expect(runs.rows[0].n).toBe(1);
      const listed = await db.query('SELECT count(*)::int AS n FROM inbound.undispatched_events WHERE id = $1', [
        stripeEvent,
      ]);
      expect(listed.rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
  });

  it('drops the arrival right after its trigger is paused, and dispatches the one right after its resume', async () => {
    // Compute checks the pause when it is asked to queue the run, whatever inbound keeps of the trigger.
    expect((await send('open', JSON.stringify({ n: 'before' }))).status).toBe(202);
    const trigger = `${base()}/function-triggers/${triggers['open']}`;
    expect((await call('PATCH', `${trigger}/pause`, { token })).status).toBe(200);
    const paused = await send('open', JSON.stringify({ n: 'paused' }));
    expect(paused.status).toBe(202);
    expect(await settled(paused.body.inboundEventId)).toMatchObject({
      dispatchStatus: 'dropped_dispatch',
      dispatchError: 'The trigger is paused.',
    });
    expect((await call('PATCH', `${trigger}/resume`, { token })).status).toBe(200);
    const resumed = await send('open', JSON.stringify({ n: 'resumed' }));
    expect(await settled(resumed.body.inboundEventId)).toMatchObject({ dispatchStatus: 'dispatched' });
  });

  it('refuses the next unsigned arrival once its trigger validates signatures (inbound drops what it kept)', async () => {
    const open = await call('GET', `${base()}/function-triggers/${triggers['open']}`, { token });
    const created = await call('POST', `${base()}/function-triggers`, {
      token,
      body: {
        name: 'toggled',
        functionId: open.body.functionId,
        executionType: 'http-trigger',
        triggerMetadata: { path: 'toggled' },
      },
    });
    expect(created.status).toBe(201);
    // Looked up, and kept for INBOUND_TRIGGER_CACHE_MS (2 s), by this first arrival.
    expect((await send('toggled', JSON.stringify({ n: 1 }))).status).toBe(202);
    const updated = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { triggerMetadata: { path: 'toggled', validateSignature: true, signingSecret: 'toggled-secret' } },
    });
    expect(updated.status).toBe(200);
    expect((await send('toggled', JSON.stringify({ n: 2 }))).status).toBe(401);
  });
});
