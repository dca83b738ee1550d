import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, startStack, type Stack } from '@strata/testkit';
import { StrataApiError, createStrataClient, type DeprecationNotice, type StrataClient } from '@strata/sdk';

/**
 * The TypeScript SDK against the whole platform: every resource group through the gateway
 * (and `{auth_url}` for IAM), the four error shapes read into one error type, and a
 * service account's client-credentials tokens.
 */
let stack: Stack;
let client: StrataClient;
const ws = `sdk-${Date.now().toString(36)}`;

const CODE = `async function run() {
  api.log('hello');
  return { success: true, data: { triggerParams, executionParams } };
}`;

/** The error a call fails with (the test fails when it succeeds or throws something else). */
async function refusal(call: Promise<unknown>): Promise<StrataApiError> {
  const outcome = await call.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value)}`);
  if (!(outcome.error instanceof StrataApiError)) throw outcome.error;
  return outcome.error;
}

beforeAll(async () => {
  stack = await startStack();
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  const token = await adminWorkspaceToken(stack, ws);
  client = createStrataClient({ baseUrl: stack.baseUrl, authUrl: stack.authUrl, workspace: ws, auth: token });
});

afterAll(async () => {
  await stack?.stop();
});

describe('the SDK', () => {
  it('manages collections and records, queries them, and restores a version', async () => {
    const collection = await client.collections.create({
      name: 'Orders',
      enableVersioning: true,
      properties: [
        { name: 'sku', type: 'string', required: true, isUnique: true },
        { name: 'amount', type: 'number' },
      ],
    });
    expect(collection).toMatchObject({ recordSlug: 'orders', enableVersioning: true, status: 'active' });
    expect(await client.collections.getBySlug('orders')).toMatchObject({ id: collection.id });

    const record = await client.records.create({ structureId: collection.id, data: { sku: 'a-1', amount: 5 } });
    expect(record).toMatchObject({ version: 1, data: { sku: 'a-1', amount: 5 } });
    const updated = await client.records.update(record.id, { amount: 7 });
    expect(updated).toMatchObject({ version: 2, data: { sku: 'a-1', amount: 7 } });

    const created = await client.records.upsert('orders', { match: { sku: 'b-2' }, data: { amount: 1 } });
    expect(created.operation).toBe('created');
    const again = await client.records.upsert('orders', { match: { sku: 'b-2' }, data: { amount: 2 } });
    expect(again).toMatchObject({ operation: 'updated', data: { id: created.data.id, version: 2 } });

    const listed = await client.records.list({ structureId: collection.id, sort: '-amount', includeCount: true });
    expect(listed.results.map((r) => r.data.sku)).toEqual(['a-1', 'b-2']);
    expect(listed.pagination).toMatchObject({ total: 2, hasMore: false });
    const bySlug = await client.records.listBySlug('orders', { filter: 'amount:>5' });
    expect(bySlug.results.map((r) => r.id)).toEqual([record.id]);

    const queried = await client.records.query({
      resource: 'orders',
      where: { 'data.amount': { gte: 2 } },
      sort: [{ field: 'data.amount', direction: 'asc' }],
      page: { limit: 10 },
    });
    expect(queried.data.map((r) => r.data.amount)).toEqual([2, 7]);

    // Walked page by page (pages of 1 here), in the order asked for.
    const walked: unknown[] = [];
    for await (const r of client.records.iterate({ structureId: collection.id, sort: 'data.sku', limit: 1 })) {
      walked.push(r.data.sku);
    }
    expect(walked).toEqual(['a-1', 'b-2']);
    const rows: unknown[] = [];
    for await (const r of client.records.iterateQuery({ resource: 'orders', page: { limit: 1 } })) rows.push(r.id);
    expect(rows.sort()).toEqual([record.id, created.data.id].sort());
    await expect(async () => {
      for await (const r of client.records.iterateQuery({ resource: 'orders', page: { limit: 1, offset: 1 } })) {
        rows.push(r.id);
      }
    }).rejects.toThrow('records.iterateQuery walks from the first row: give no page.offset');

    const history = await client.records.history(record.id);
    expect(history.versions.map((v) => v.version).sort()).toEqual([1, 2]);
    const restored = await client.records.restore(record.id, { version: 1 });
    expect(restored).toMatchObject({ restoredFrom: 1, data: { amount: 5 } });

    const saved = await client.savedQueries.create({
      name: 'big orders',
      query: { resource: 'orders', where: { 'data.amount': { gte: '${min}' } } },
      variables: { min: { type: 'number' } },
    });
    const executed = await client.savedQueries.execute<{ id: string }>(saved.id, { min: 5 });
    expect(executed.data.map((r) => r.id)).toEqual([record.id]);
    expect((await client.savedQueries.list('orders')).results.map((q) => q.id)).toEqual([saved.id]);
    const missing = await refusal(client.savedQueries.execute(saved.id, {}));
    expect(missing.status).toBe(422);

    const deleted = await client.records.delete(created.data.id);
    expect(deleted).toMatchObject({ success: true, id: created.data.id });

    const scratch = await client.collections.create({ name: 'Scratch', properties: [] });
    await client.collections.delete(scratch.id);
    const listed2 = await client.collections.list({ search: 'scratch', includeDeleted: true });
    expect(listed2.results.map((c) => [c.id, c.isDeleted])).toEqual([[scratch.id, true]]);
    expect(await client.collections.restore(scratch.id)).toMatchObject({ id: scratch.id, isDeleted: false });
    expect(await client.collections.validate(collection.id, { sku: 'c-3', amount: 1 })).toEqual({ valid: true });
    const invalid = await client.collections.validate(collection.id, { amount: 'many' });
    expect(invalid.valid).toBe(false);
    const pair = await client.collections.bulkCreate([
      {
        name: 'Pair A',
        properties: [
          { name: 'x', type: 'string' },
          { name: 'y', type: 'string' },
        ],
      },
      { name: 'Pair B', properties: [] },
    ]);
    const trimmed = await client.collections.removeProperties(pair.results[0]!.id, ['y'], { force: true });
    expect(trimmed.collection.properties.map((p) => p.name)).toEqual(['x']);
    expect(await client.collections.validateDefinition({ name: 'Pair C', properties: [] })).toEqual({ valid: true });
    const change = await client.collections.validateChange(pair.results[0]!.id, { properties: [] });
    expect(change).toEqual({
      valid: true,
      errors: [],
      records: { checked: 0, failed: 0, byField: {}, sample: [] },
      migration: { required: false, properties: [] },
    });
    const gone = await client.collections.bulkDelete({
      ids: [pair.results[0]!.id],
      slugs: [pair.results[1]!.recordSlug],
    });
    expect(gone).toMatchObject({ success: true, failed: 0 });
    expect(gone.deleted).toHaveLength(2);
    const slugs: string[] = [];
    for await (const each of client.collections.iterate()) slugs.push(each.recordSlug);
    expect(slugs.sort()).toEqual(['orders', 'scratch']);
  });

  it('reads every error shape of the platform into StrataApiError', async () => {
    const noRecord = await refusal(client.records.get(randomUUID()));
    expect(noRecord).toMatchObject({ status: 404, code: 'RECORD_NOT_FOUND' });

    const noFunction = await refusal(client.computeFunctions.get(randomUUID()));
    expect(noFunction).toMatchObject({ status: 404, message: 'Function not found.' });

    const badOrchestration = await refusal(
      client.orchestrations.create({ slug: 'bad', name: 'Bad', trigger: { type: 'on-demand' }, steps: [] }),
    );
    expect(badOrchestration).toMatchObject({ status: 400, code: 'validation_error' });
    expect(badOrchestration.fieldErrors.map((d) => d.field)).toContain('steps');

    const badAccount = await refusal(client.serviceAccounts.create({ name: '' }));
    expect(badAccount.status).toBe(400);
    expect(badAccount.fieldErrors.map((d) => d.field)).toEqual(['name']);
  });

  it('creates functions and triggers, runs them and reads the runs back', async () => {
    const fn = await client.computeFunctions.create({ name: 'echo', code: CODE });
    expect((await client.computeFunctions.list({ search: 'ech' })).functions.map((f) => f.id)).toEqual([fn.id]);
    await client.computeFunctions.update(fn.id, { description: 'echoes' });
    const versions = await client.computeFunctions.versions(fn.id);
    expect(versions.versions.map((v) => v.version)).toEqual([2, 1]);

    const queued = await client.computeFunctions.test({ code: CODE, params: { n: 1 } });
    expect(queued.status).toBe('queued');
    const tested = await client.functionRuns.waitForJob(queued.jobId);
    expect(tested).toMatchObject({
      status: 'succeeded',
      result: { success: true, data: { executionParams: { n: 1 } } },
    });
    expect(tested.logs.map((l) => l.message)).toEqual(['hello']);
    // The list filtered by the job answers the test's result and logs too (typed on byJobId).
    const byJob = await client.functionRuns.byJobId(queued.jobId);
    expect(byJob?.result).toEqual(tested.result);
    expect(byJob?.logs.map((l) => l.message)).toEqual(['hello']);

    const trigger = await client.functionTriggers.create({
      name: 'by hand',
      functionId: fn.id,
      executionType: 'on-demand',
      triggerMetadata: { params: { region: 'eu', token: { value: 's3cret', encrypt: true } } },
    });
    expect(trigger.triggerMetadata).toMatchObject({ params: { region: 'eu', token: { encrypted: true } } });
    const jobId = await client.functionTriggers.execute(trigger.id, { order: 42 });
    expect(typeof jobId).toBe('string');
    const run = await client.functionRuns.waitForJob(jobId);
    expect(run).toMatchObject({
      status: 'succeeded',
      triggerId: trigger.id,
      // The encrypted parameter is masked where the run is stored (docs/compute.md, "Encrypted parameters").
      result: { data: { triggerParams: { region: 'eu', token: '********' }, executionParams: { order: 42 } } },
    });
    const rerun = await client.functionRuns.rerun(run.id, { reason: 'again', overrideParams: { order: 43 } });
    const second = await client.functionRuns.waitForJob(rerun.jobId);
    expect(second).toMatchObject({
      isRerun: true,
      originalRunId: run.id,
      result: { data: { executionParams: { order: 43 } } },
    });
    expect((await client.functionRuns.rerunHistory(run.id)).rerunCount).toBe(1);

    const draft = await client.drafts.create({
      resourceType: 'compute-functions',
      data: { name: 'later', code: CODE },
    });
    const published = await client.computeFunctions.publish(draft.id);
    expect(published.name).toBe('later');
    expect((await refusal(client.drafts.get(draft.id))).status).toBe(404);

    expect((await client.functionTriggers.versions(trigger.id)).versions.map((v) => v.version)).toEqual([1]);
    expect(await client.functionTriggers.version(trigger.id, 1)).toMatchObject({ name: 'by hand', functionId: fn.id });
    expect(await client.functionTriggers.pause(trigger.id)).toMatchObject({ success: true });
    expect((await client.computeFunctions.delete(published.id)).success).toBe(true);
  });

  it('calls endpoints with each auth mode, signing HMAC calls, and walks the function lists', async () => {
    const fn = await client.computeFunctions.create({
      name: 'greeter',
      code: `export default async (context) => {
        context.res.json({ statusCode: 201, headers: { 'x-seen': context.req.auth.mode }, body: {
          hello: context.req.payload?.name ?? null, query: context.req.query } });
      };`,
    });
    const endpoint = (name: string, auth: { mode: string }) =>
      client.functionTriggers.create({
        name,
        functionId: fn.id,
        executionType: 'endpoint',
        triggerMetadata: { path: name, allowedMethods: ['POST', 'GET'], auth },
      });
    await endpoint('by-token', { mode: 'bearer' });
    await endpoint('open', { mode: 'public' });
    const keyed = await endpoint('keyed', { mode: 'apiKey' });
    const signed = await endpoint('signed', { mode: 'hmac' });
    const apiKey = keyed.issuedCredentials?.apiKey;
    const signingSecret = signed.issuedCredentials?.signingSecret;
    expect([typeof apiKey, typeof signingSecret]).toEqual(['string', 'string']);

    const byToken = await client.endpoints.invoke<Record<string, unknown>>('by-token', {
      body: { name: 'ada' },
      query: { tag: ['a', 'b'] },
    });
    expect(byToken).toMatchObject({ status: 201, body: { hello: 'ada', query: { tag: ['a', 'b'] } } });
    expect(byToken.headers.get('x-seen')).toBe('bearer');
    // The answer goes out before the run's outcome is written: read the run once it has ended.
    const answeredRun = await eventually(async () => {
      const run = await client.functionRuns.get(byToken.runId!);
      return run.status === 'running' ? undefined : run;
    });
    expect(answeredRun.status).toBe('succeeded');
    const open = await client.endpoints.invoke('open', { method: 'GET', auth: 'none' });
    expect([open.status, open.headers.get('x-seen')]).toEqual([201, 'public']);
    const keyedCall = await client.endpoints.invoke('keyed', { body: { name: 'kay' }, auth: { apiKey: apiKey! } });
    expect([keyedCall.body, keyedCall.headers.get('x-seen')]).toEqual([{ hello: 'kay', query: {} }, 'apiKey']);
    // The signature covers the method, the path, the query as sent and the body; the platform takes each
    // signature once, so the same call twice is signed in two seconds.
    for (const name of ['grace', 'grace', 'hopper']) {
      const signedCall = await client.endpoints.invoke('signed', {
        body: { name },
        query: { page: 2 },
        auth: { signingSecret: signingSecret! },
      });
      expect([signedCall.body, signedCall.headers.get('x-seen')]).toEqual([
        { hello: name, query: { page: '2' } },
        'hmac',
      ]);
    }
    // Without the client's token an endpoint of bearer mode refuses the call, and a wrong secret is refused.
    expect((await refusal(client.endpoints.invoke('by-token', { auth: 'none' }))).status).toBe(401);
    expect((await refusal(client.endpoints.invoke('signed', { auth: { signingSecret: 'ses_wrong' } }))).status).toBe(
      401,
    );

    const triggers: string[] = [];
    for await (const trigger of client.functionTriggers.iterate({ search: 'e', searchField: 'name' })) {
      triggers.push(trigger.name);
    }
    // Other tests' triggers whose name has an "e" (the test runs' system-default) come too, each once.
    expect(triggers).toEqual(expect.arrayContaining(['by-token', 'keyed', 'open', 'signed']));
    expect(triggers.every((name) => name.includes('e'))).toBe(true);
    expect(new Set(triggers).size).toBe(triggers.length);
    const functions: string[] = [];
    for await (const f of client.computeFunctions.iterate()) functions.push(f.name);
    expect(functions).toContain('greeter');
    const statuses = await eventually(async () => {
      const runs: string[] = [];
      for await (const run of client.functionRuns.iterate({ functionId: fn.id })) runs.push(run.status);
      return runs.every((status) => status === 'succeeded') ? runs : undefined;
    });
    expect(statuses).toHaveLength(6);
  });

  it('runs an orchestration and reads its run and steps', async () => {
    const orchestration = await client.orchestrations.create({
      slug: 'route',
      name: 'Route',
      status: 'active',
      trigger: { type: 'on-demand' },
      steps: [
        {
          id: 'decide',
          type: 'decision',
          cases: [{ conditions: [{ path: 'input.amount', op: 'gt', value: 100 }], nextStepId: 'wait' }],
        },
        { id: 'wait', type: 'delay', delayMs: 1 },
      ],
    });
    const decision = await client.orchestrations.testDecision(orchestration.id, 'decide', { input: { amount: 500 } });
    expect(decision).toMatchObject({ matchedCaseIndex: 0, selectedNextStepId: 'wait' });

    const started = await client.orchestrations.runs.start(orchestration.id, {
      input: { amount: 500 },
      correlationId: 'c-1',
    });
    expect(started).toMatchObject({ status: 'pending', correlationId: 'c-1' });
    const run = await eventually(async () => {
      const now = await client.orchestrations.runs.get(orchestration.id, started.id, { include: 'steps' });
      return now.status === 'completed' || now.status === 'failed' ? now : undefined;
    }, 30_000);
    expect(run.status).toBe('completed');
    expect(run.steps?.map((s) => s.stepId)).toEqual(['decide', 'wait']);
    expect((await client.orchestrations.runs.list(orchestration.id)).meta.total).toBe(1);
    const walked: string[] = [];
    for await (const each of client.orchestrations.runs.iterate(orchestration.id, { status: 'completed' })) {
      walked.push(each.id);
    }
    expect(walked).toEqual([started.id]);
    const orchestrations: string[] = [];
    for await (const each of client.orchestrations.iterate()) orchestrations.push(each.slug);
    expect(orchestrations).toEqual(['route']);
    await client.orchestrations.delete(orchestration.id);
    expect((await refusal(client.orchestrations.get(orchestration.id))).status).toBe(404);
  });

  it('manages webhook subscriptions and reads inbound events', async () => {
    const subscription = await client.webhookSubscriptions.create(
      { name: 'hooks', url: 'https://hooks.example.com/strata', events: ['record_created'] },
      { idempotencyKey: `sub-${ws}` },
    );
    expect(subscription.secret).toMatch(/^whsec_/);
    const listed = await client.webhookSubscriptions.list();
    expect(listed.data.map((s) => [s.id, s.secret])).toEqual([[subscription.id, undefined]]);
    const paused = await client.webhookSubscriptions.update(subscription.id, { active: false });
    expect(paused.active).toBe(false);
    expect(await client.webhookSubscriptions.health(subscription.id)).toMatchObject({ totalDeliveries24h: 0 });
    expect((await client.webhookSubscriptions.deliveries(subscription.id)).data).toEqual([]);
    await client.webhookSubscriptions.delete(subscription.id);

    expect(await client.inboundEvents.list({ limit: 5 })).toMatchObject({ data: [], meta: { total: 0, limit: 5 } });
    const arrivals: unknown[] = [];
    for await (const arrival of client.inboundEvents.iterate()) arrivals.push(arrival);
    expect(arrivals).toEqual([]);
  });

  it('gives a service account its own client, on client-credentials tokens', async () => {
    const group = await client.groups.create({ name: 'readers' });
    await client.groups.addPolicy(group.id, { resource: 'structures', actions: ['list', 'retrieve'] });
    const account = await client.serviceAccounts.create({ name: 'reader' });
    expect(account.clientSecret).toMatch(/^sk_/);
    await client.groups.addMember(group.id, { type: 'service_account', id: account.clientId });

    const reader = createStrataClient({
      baseUrl: stack.baseUrl,
      authUrl: stack.authUrl,
      workspace: ws,
      auth: { clientId: account.clientId, clientSecret: account.clientSecret },
    });
    expect((await reader.collections.list()).results.map((c) => c.recordSlug)).toContain('orders');
    const denied = await refusal(reader.computeFunctions.list());
    expect(denied.status).toBe(403);

    const rotated = await client.serviceAccounts.rotate(account.id);
    expect(rotated.clientSecret).not.toBe(account.clientSecret);
    const stale = createStrataClient({
      baseUrl: stack.baseUrl,
      authUrl: stack.authUrl,
      workspace: ws,
      auth: { clientId: account.clientId, clientSecret: account.clientSecret },
    });
    await expect(stale.collections.list()).rejects.toThrow(/token request failed \(401\)/);
  });

  it('keeps the 6.0.0 names as deprecated aliases, and tells of their use', () => {
    const notices: DeprecationNotice[] = [];
    const fresh = createStrataClient({
      baseUrl: stack.baseUrl,
      authUrl: stack.authUrl,
      workspace: ws,
      auth: 't',
      onDeprecation: (notice) => notices.push(notice),
    });
    expect(fresh.smartQueries).toBe(fresh.savedQueries);
    expect(fresh.runs).toBe(fresh.functionRuns);
    expect(notices).toEqual([
      { kind: 'name', name: 'client.smartQueries', successor: 'client.savedQueries', since: '6.0.0' },
      { kind: 'name', name: 'client.runs', successor: 'client.functionRuns', since: '6.0.0' },
    ]);
    expect(() =>
      createStrataClient({ baseUrl: stack.baseUrl, authUrl: stack.authUrl, workspace: 'Not A Slug', auth: 't' }),
    ).toThrow("Invalid workspace slug 'Not A Slug'");
  });
});
