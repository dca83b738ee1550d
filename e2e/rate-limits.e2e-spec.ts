import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { loginWithPassword } from '@strata/sdk';
import { ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Counters restart at window boundaries (multiples of the window since the epoch)
 * on the service's clock. The auth service runs on a clock that stands 20.5 s into
 * a minute window until the test moves it, so budgets and Retry-After are exact.
 */
const WINDOW_MS = 60_000;
const windowStart = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS;
const clock = new ManualClock(windowStart + 20_500);
let stack: Stack;
const suffix = Date.now().toString(36);
const [wsA, wsB] = [`rl-a-${suffix}`, `rl-b-${suffix}`];
const tokens: Record<string, string> = {};

beforeAll(async () => {
  stack = await startStack(
    // No worker runs here: the compute API turns record events into runs (and queues them), on the test's clock.
    { RATE_LIMIT_READ_PER_MINUTE: '3', RATE_LIMIT_EXECUTE_PER_MINUTE: '2', COMPUTE_EVENT_CONSUMERS: 'api' },
    { clocks: { auth: clock, data: clock, compute: clock } },
  );
  tokens[wsA] = await adminWorkspaceToken(stack, wsA);
  tokens[wsB] = await adminWorkspaceToken(stack, wsB);
});

afterAll(async () => {
  await stack?.stop();
});

const list = (ws: string) =>
  call('GET', `${stack.authUrl}/workspace/${ws}/api/v1/service-accounts`, { token: tokens[ws]! });

describe('rate limits', () => {
  it('counts reads per workspace and answers 429 with Retry-After once the budget is spent', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await list(wsA);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit')).toBe('3');
      remaining.push(ok.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const limited = await list(wsA);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // 39.5 s of the window are left: Retry-After rounds up, and x-ratelimit-reset is the window's end.
    expect(limited.headers.get('retry-after')).toBe('40');
    expect(limited.headers.get('x-ratelimit-reset')).toBe(String((windowStart + WINDOW_MS) / 1000));
    expect(limited.body).toMatchObject({ error: 'Too Many Requests', code: 'RATE_LIMITED' });
    expect(limited.body.message).toMatch(/rate limit/i);

    // The budget is the workspace's, whichever service is asked; the records API names its 429 QUOTA_EXCEEDED.
    const records = await call('GET', `${stack.baseUrl}/data/workspace/${wsA}/api/v1/records`, {
      token: tokens[wsA]!,
    });
    expect(records.status).toBe(429);
    expect(records.headers.get('retry-after')).toBe('40');
    expect(records.body).toEqual({ error: { code: 'QUOTA_EXCEEDED', message: expect.stringMatching(/rate limit/i) } });
    // A query is a read whatever its method: POST /records/query, POST /query and saved-query
    // execution (every path form, the /smart-queries alias too) and test spend the read budget,
    // and are refused in the records shape with Retry-After.
    const id = '7d3c7d5e-4b1a-4f0e-9a55-0c8f3c2b9e11';
    for (const path of [
      'records/query',
      'query',
      `saved-queries/${id}/execute`,
      `saved-queries/orders/${id}/execute`,
      `saved-queries/slug/orders/execute/${id}`,
      `smart-queries/${id}/execute`,
      'saved-queries/orders/test',
    ]) {
      const query = await call('POST', `${stack.baseUrl}/data/workspace/${wsA}/api/v1/${path}`, {
        token: tokens[wsA]!,
        body: {},
      });
      expect({ path, status: query.status }).toEqual({ path, status: 429 });
      expect(query.headers.get('retry-after')).toBe('40');
      expect(query.headers.get('x-ratelimit-limit')).toBe('3');
      expect(query.body).toEqual({
        error: { code: 'QUOTA_EXCEEDED', message: expect.stringMatching(/read operations/) },
      });
    }

    // Another workspace has a budget of its own.
    const other = await list(wsB);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('gives the budget back when the next window starts', async () => {
    expect((await list(wsA)).status).toBe(429);
    clock.advance(windowStart + WINDOW_MS - 1 - clock.now().getTime());
    expect((await list(wsA)).status).toBe(429);
    clock.advance(1);
    const fresh = await list(wsA);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('keeps reads and writes in separate budgets', async () => {
    const created = await call('POST', `${stack.authUrl}/workspace/${wsA}/api/v1/service-accounts`, {
      token: tokens[wsA]!,
      body: { name: 'still-writable' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('lets a workspace whose reads are spent write through another service: permission lookups are not reads', async () => {
    while ((await list(wsA)).status !== 429);
    // A token no service has looked up yet: the compute service asks the auth service what it may do.
    const { accessToken: fresh } = await loginWithPassword({
      authUrl: stack.authUrl,
      email: stack.adminEmail,
      password: stack.adminPassword,
      workspace: wsA,
    });
    const created = await call('POST', `${stack.baseUrl}/data/workspace/${wsA}/api/v1/compute-functions`, {
      token: fresh,
      body: { name: 'written-after-reads', code: 'async function run() { return { success: true }; }' },
    });
    expect(created.status).toBe(201);
    expect((await list(wsA)).status).toBe(429);
  });

  it('counts function executions against the execute budget, answered in the functions error shape', async () => {
    const execute = () =>
      call('POST', `${stack.baseUrl}/data/workspace/${wsB}/api/v1/compute-functions/test`, {
        token: tokens[wsB]!,
        body: { code: 'async function run() { return { success: true }; }', params: {} },
      });
    expect((await execute()).status).toBe(200);
    const second = await execute();
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-limit')).toBe('2');
    const limited = await execute();
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: expect.stringMatching(/rate limit/i), statusCode: 429 });
    expect(limited.headers.get('retry-after')).toEqual(expect.any(String));
  });

  it('counts event-driven runs in the same budget and records the ones over it as rate_limited', async () => {
    // A fresh window: two executions for the workspace (reads stay at 3, so the runs are read underneath).
    clock.advance(WINDOW_MS);
    const data = `${stack.baseUrl}/data/workspace/${wsA}/api/v1`;
    const t = tokens[wsA]!;
    const collection = await call('POST', `${data}/structures`, {
      token: t,
      body: { name: 'Pings', recordSlug: 'pings', properties: [{ name: 'n', type: 'number' }] },
    });
    const fn = await call('POST', `${data}/compute-functions`, {
      token: t,
      body: { name: 'on-ping', code: 'async function run() { return { success: true }; }' },
    });
    const trigger = await call('POST', `${data}/function-triggers`, {
      token: t,
      body: {
        name: 'on-ping',
        functionId: fn.body.id,
        executionType: 'event-driven',
        triggerMetadata: { event: 'record_created', recordSlug: 'pings' },
      },
    });
    expect(trigger.status).toBe(201);
    for (let n = 0; n < 3; n++) {
      const created = await call('POST', `${data}/records`, {
        token: t,
        body: { structureId: collection.body.id, data: { n } },
      });
      expect(created.status).toBeLessThan(300);
    }
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const until = Date.now() + 30_000;
      let runs: { status: string; error: string | null }[] = [];
      while (runs.length < 3) {
        if (Date.now() > until) throw new Error(`${runs.length} runs`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        runs = (await db.query('SELECT status, error FROM compute.runs WHERE trigger_id = $1', [trigger.body.id])).rows;
      }
      // No worker runs in this stack: two runs wait queued, the third was refused and recorded.
      expect(runs.map((r) => r.status).sort()).toEqual(['queued', 'queued', 'rate_limited']);
      expect(JSON.parse(runs.find((r) => r.status === 'rate_limited')!.error!)).toMatchObject({ name: 'RateLimited' });
    } finally {
      await db.end();
    }
  });

  it('counts endpoint calls that reach a run, and records the one over the budget as rate_limited', async () => {
    clock.advance(WINDOW_MS);
    const data = `${stack.baseUrl}/data/workspace/${wsB}/api/v1`;
    const t = tokens[wsB]!;
    const fn = await call('POST', `${data}/compute-functions`, {
      token: t,
      body: { name: 'hello', code: 'export default async () => ({ hello: true });' },
    });
    const trigger = await call('POST', `${data}/function-triggers`, {
      token: t,
      body: {
        name: 'hello',
        functionId: fn.body.id,
        executionType: 'endpoint',
        triggerMetadata: { path: 'hello', auth: { mode: 'public' } },
      },
    });
    expect(trigger.status).toBe(201);
    // The compute API's own route (no worker runs in this stack to serve the gateway's).
    const endpoints = `${stack.computeUrl}/data/workspace/${wsB}/api/v1/endpoints`;
    // Unknown paths spend nothing.
    for (let n = 0; n < 3; n++) expect((await call('POST', `${endpoints}/nowhere`, { body: {} })).status).toBe(404);
    // No worker runs: the two calls within the budget are refused unqueued (503), the third is over it.
    expect((await call('POST', `${endpoints}/hello`, { body: {} })).status).toBe(503);
    expect((await call('POST', `${endpoints}/hello`, { body: {} })).status).toBe(503);
    const limited = await call('POST', `${endpoints}/hello`, { body: {} });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: expect.stringContaining('limit of 2 function executions'), statusCode: 429 });
    expect(limited.headers.get('retry-after')).toEqual(expect.any(String));
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT id, status FROM compute.runs WHERE trigger_id = $1', [trigger.body.id]);
      expect(rows).toEqual([{ id: limited.headers.get('x-strata-run-id'), status: 'rate_limited' }]);
    } finally {
      await db.end();
    }
  });
});
