import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const suffix = Date.now().toString(36);
const ws = `orch-${suffix}`;
const otherWs = `orch-other-${suffix}`;
let token: string;
let otherToken: string;
let functionId: string;
let otherFunctionId: string;

const base = (workspace = ws) => `${stack.baseUrl}/orchestration/ws/${workspace}/api/v1`;
const steps = () => [
  { id: 'charge', type: 'compute', functionId, retry: { maxAttempts: 3, backoffMs: 1000 }, nextStepId: 'route' },
  {
    id: 'route',
    type: 'decision',
    cases: [{ conditions: [{ path: 'steps.charge.output.amount', op: 'gt', value: 100 }], nextStepId: 'cool-off' }],
    defaultNextStepId: null,
  },
  { id: 'cool-off', type: 'delay', delayMs: 60_000 },
];
const create = (body: Record<string, unknown>, t = token, workspace = ws) =>
  call('POST', `${base(workspace)}/orchestrations`, { token: t, body });

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
  const code = 'async function run() { return { success: true, data: { amount: 150 } }; }';
  const fn = await call('POST', `${stack.baseUrl}/data/workspace/${ws}/api/v1/compute-functions`, {
    token,
    body: { name: 'charge', code },
  });
  functionId = fn.body.id;
  const other = await call('POST', `${stack.baseUrl}/data/workspace/${otherWs}/api/v1/compute-functions`, {
    token: otherToken,
    body: { name: 'charge', code },
  });
  otherFunctionId = other.body.id;
});

afterAll(async () => {
  await stack?.stop();
});

describe('orchestrations', () => {
  let id: string;

  it('creates an orchestration in draft, version 1, with its signing secret sealed', async () => {
    const created = await create({
      slug: 'checkout',
      name: 'Checkout',
      trigger: { type: 'http-trigger', path: 'checkout', validateSignature: true, signingSecret: 'hook-secret' },
      steps: steps(),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^orch_/),
      slug: 'checkout',
      name: 'Checkout',
      status: 'draft',
      isActive: false,
      version: 1,
      trigger: {
        type: 'http-trigger',
        path: 'checkout',
        validateSignature: true,
        signatureHeaderName: 'x-signature',
        signingSecret: { value: expect.stringMatching(/^sv1\./), encrypted: true, keyVersion: 1 },
      },
    });
    expect(created.body.steps.map((s: { id: string }) => s.id)).toEqual(['charge', 'route', 'cool-off']);
    expect(JSON.stringify(created.body)).not.toContain('hook-secret');
    id = created.body.id;
  });

  it('answers 409 for a taken slug with the spec’s message', async () => {
    const taken = await create({ slug: 'checkout', name: 'Again', trigger: { type: 'on-demand' }, steps: steps() });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ message: "Orchestration with slug 'checkout' already exists" });
  });

  it('refuses bad steps and triggers with one details entry per problem, in the orchestration shape', async () => {
    const bad = await create({
      slug: 'broken',
      name: 'Broken',
      trigger: { type: 'scheduled', scheduleType: 'cron', cronExpression: '61 * * * *' },
      steps: [
        { id: 'a', type: 'compute', functionId: otherFunctionId, nextStepId: 'b' },
        {
          id: 'b',
          type: 'decision',
          cases: [{ conditions: [{ path: 'record.x', op: 'like', value: 1 }], nextStepId: 'a' }],
        },
        { id: 'c', type: 'delay', delayMs: 0 },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    const fields = bad.body.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'trigger.cronExpression',
        'steps[1].cases[0].conditions[0].path',
        'steps[1].cases[0].conditions[0].op',
        'steps[2].delayMs',
      ]),
    );
    // A function of another workspace does not exist here.
    const foreign = await create({
      slug: 'foreign',
      name: 'Foreign',
      trigger: { type: 'on-demand' },
      steps: [{ id: 'a', type: 'compute', functionId: otherFunctionId }],
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.details).toEqual([
      { field: 'steps[0].functionId', message: 'names no function of this workspace' },
    ]);
    // An unknown function is reported with the step's other problems, not hidden by them.
    const twoProblems = await create({
      slug: 'two-problems',
      name: 'Two problems',
      trigger: { type: 'on-demand' },
      steps: [{ id: 'a', type: 'compute', functionId: otherFunctionId, timeoutMs: 5 }],
    });
    expect(twoProblems.status).toBe(400);
    expect(twoProblems.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'steps[0].functionId',
      'steps[0].timeoutMs',
    ]);
    // A value given wrong is told what it must be; one left out, that it is required.
    const wrongOrMissing = await create({
      slug: 'wrong-or-missing',
      name: 'Wrong or missing',
      trigger: { type: 'on-demand' },
      steps: [
        { id: 'a', type: 'compute', functionId: 'abc', nextStepId: 'b' },
        { id: 'b', type: 'compute' },
      ],
    });
    expect(wrongOrMissing.body.details).toEqual([
      { field: 'steps[0].functionId', message: 'must be the UUID of a function' },
      { field: 'steps[1].functionId', message: 'is required: the UUID of a function' },
    ]);
    // An id in upper case names the same function, and is kept as compute answers it.
    const upper = await create({
      slug: 'upper-case-id',
      name: 'Upper case id',
      trigger: { type: 'on-demand' },
      steps: [{ id: 'a', type: 'compute', functionId: functionId.toUpperCase() }],
    });
    expect(upper.status).toBe(201);
    expect(upper.body.steps[0].functionId).toBe(functionId);
    // Gone again: the listing below counts the orchestrations it made.
    expect((await call('DELETE', `${base()}/orchestrations/${upper.body.id}`, { token })).status).toBe(204);
    // Endpoint code cannot be a compute step: a step calls run().
    const hook = await call('POST', `${stack.baseUrl}/data/workspace/${ws}/api/v1/compute-functions`, {
      token,
      body: { name: 'a-hook', code: 'export default async () => ({ statusCode: 200 });' },
    });
    expect(hook.status).toBe(201);
    const endpointStep = await create({
      slug: 'endpoint-step',
      name: 'Endpoint step',
      trigger: { type: 'on-demand' },
      steps: [{ id: 'a', type: 'compute', functionId: hook.body.id }],
    });
    expect(endpointStep.status).toBe(400);
    expect(endpointStep.body.details).toEqual([
      {
        field: 'steps[0].functionId',
        message:
          'names a function of endpoint code (export default async (context)); a compute step runs code defining async function run()',
      },
    ]);
    // A cycle without a delay step.
    const loop = await create({
      slug: 'loop',
      name: 'Loop',
      trigger: { type: 'on-demand' },
      steps: [{ id: 'a', type: 'compute', functionId, nextStepId: 'a' }],
    });
    expect(loop.body.details[0].message).toContain('cycle without a delay step');
    const missing = await create({ slug: 'x', name: 'X' });
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['steps', 'trigger']);
    // A bad name does not hide the trigger's and the steps' problems: all of them at once.
    const everything = await create({
      slug: 'mb-x',
      name: '',
      trigger: { type: 'bogus' },
      steps: [{ id: 'a', type: 'loop' }],
    });
    expect(everything.status).toBe(400);
    const all = everything.body.details.map((d: { field: string }) => d.field);
    expect(all).toEqual(expect.arrayContaining(['name', 'trigger.type']));
    expect(all.some((f: string) => f.startsWith('steps[0]'))).toBe(true);
    const badUpdate = await call('PUT', `${base()}/orchestrations/${id}`, {
      token,
      body: { name: '', steps: [{ id: 'a', type: 'loop' }] },
    });
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.details.map((d: { field: string }) => d.field)).toEqual(
      expect.arrayContaining(['name', expect.stringMatching(/^steps\[0\]/)]),
    );
  });

  it('updates: a new version each time, status set directly or through isActive', async () => {
    const renamed = await call('PUT', `${base()}/orchestrations/${id}`, { token, body: { name: 'Checkout v2' } });
    expect(renamed.body).toMatchObject({ name: 'Checkout v2', version: 2, status: 'draft' });
    const activated = await call('PUT', `${base()}/orchestrations/${id}`, { token, body: { isActive: true } });
    expect(activated.body).toMatchObject({ status: 'active', isActive: true, version: 3 });
    const paused = await call('PUT', `${base()}/orchestrations/${id}`, { token, body: { isActive: false } });
    expect(paused.body).toMatchObject({ status: 'paused', version: 4 });
    const resteps = await call('PUT', `${base()}/orchestrations/${id}`, {
      token,
      body: { status: 'active', steps: [{ id: 'only', type: 'compute', functionId }] },
    });
    expect(resteps.body).toMatchObject({ status: 'active', version: 5, steps: [{ id: 'only' }] });
    // The sealed secret sent back as GET answered it is kept.
    const kept = await call('PUT', `${base()}/orchestrations/${id}`, {
      token,
      body: { trigger: resteps.body.trigger },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.trigger.signingSecret).toEqual(resteps.body.trigger.signingSecret);
    // A body of unknown fields only is told which, besides what it lacks.
    const misspelt = await call('PUT', `${base()}/orchestrations/${id}`, { token, body: { nme: 'x' } });
    expect(misspelt.status).toBe(400);
    expect(misspelt.body.details.map((d: { field: string }) => d.field)).toEqual(['nme', 'body']);
    // status and the older isActive that contradicts it: neither silently wins.
    for (const body of [
      { status: 'draft', isActive: true },
      { status: 'active', isActive: false },
    ]) {
      const contradiction = await call('PUT', `${base()}/orchestrations/${id}`, { token, body });
      expect(contradiction.status).toBe(400);
      expect(contradiction.body.details).toEqual([
        { field: 'isActive', message: expect.stringContaining(`contradicts status '${body.status}'`) },
      ]);
    }
    const agreeing = await call('PUT', `${base()}/orchestrations/${id}`, {
      token,
      body: { status: 'active', isActive: true },
    });
    expect(agreeing.body).toMatchObject({ status: 'active', version: 7 });
    expect((await call('PUT', `${base()}/orchestrations/${id}`, { token, body: {} })).status).toBe(400);
    expect((await call('PUT', `${base()}/orchestrations/${id}`, { token, body: { status: 'running' } })).status).toBe(
      400,
    );
  });

  it('keeps a schedule’s next due time when an update leaves the schedule alone', async () => {
    const made = await create({
      slug: 'every-ten-minutes',
      name: 'Every ten minutes',
      status: 'active',
      trigger: { type: 'scheduled', scheduleType: 'interval', interval: 600 },
      steps: [{ id: 'only', type: 'compute', functionId }],
    });
    expect(made.status).toBe(201);
    const schedule = async (sql: string, params: unknown[] = []) => {
      const db = new pg.Client({ connectionString: stack.databaseUrl });
      await db.connect();
      try {
        return (await db.query(sql, [made.body.id, ...params])).rows;
      } finally {
        await db.end();
      }
    };
    const dueOf = async () =>
      (
        (await schedule('SELECT due_at FROM orchestration.schedules WHERE orchestration_id = $1'))[0]?.due_at as Date
      ).toISOString();
    // A due time no update would compute (it is far from now + the interval): kept only if nothing reschedules.
    const kept = '2030-01-01T00:00:00.000Z';
    await schedule('UPDATE orchestration.schedules SET due_at = $2 WHERE orchestration_id = $1', [kept]);
    // Before, a description-only update restarted the interval from the update.
    const described = await call('PUT', `${base()}/orchestrations/${made.body.id}`, {
      token,
      body: { description: 'only a description' },
    });
    expect(described.status).toBe(200);
    expect(await dueOf()).toBe(kept);
    const faster = await call('PUT', `${base()}/orchestrations/${made.body.id}`, {
      token,
      body: { trigger: { type: 'scheduled', scheduleType: 'interval', interval: 60 } },
    });
    expect(faster.status).toBe(200);
    expect(await dueOf()).not.toBe(kept);
    await call('DELETE', `${base()}/orchestrations/${made.body.id}`, { token });
  });

  it('lists with page, pageSize (max 100), sort and order', async () => {
    for (const slug of ['alpha', 'beta', 'gamma']) {
      expect((await create({ slug, name: slug, trigger: { type: 'on-demand' }, steps: steps() })).status).toBe(201);
    }
    const page = await call('GET', `${base()}/orchestrations?pageSize=2&sort=slug&order=asc`, { token });
    expect(page.body.meta).toEqual({ total: 4, page: 1, pageSize: 2 });
    expect(page.body.data.map((o: { slug: string }) => o.slug)).toEqual(['alpha', 'beta']);
    const second = await call('GET', `${base()}/orchestrations?pageSize=2&page=2&sort=slug&order=asc`, { token });
    expect(second.body.data.map((o: { slug: string }) => o.slug)).toEqual(['checkout', 'gamma']);
    const byDefault = await call('GET', `${base()}/orchestrations`, { token });
    expect(byDefault.body.meta).toEqual({ total: 4, page: 1, pageSize: 20 });
    expect(byDefault.body.data[0].slug).toBe('gamma');
    expect((await call('GET', `${base()}/orchestrations?pageSize=101`, { token })).status).toBe(400);
    expect((await call('GET', `${base()}/orchestrations?sort=color`, { token })).status).toBe(400);
    expect((await call('GET', `${base()}/orchestrations`)).status).toBe(401);
  });

  it('keeps workspaces apart and answers the older bases with deprecation headers', async () => {
    expect((await call('GET', `${base(otherWs)}/orchestrations/${id}`, { token: otherToken })).status).toBe(404);
    expect((await call('GET', `${base()}/orchestrations/${id}`, { token: otherToken })).status).toBe(403);
    const older = await call('GET', `${stack.baseUrl}/orchestration/workspace/${ws}/api/v1/orchestrations/${id}`, {
      token,
    });
    expect(older.status).toBe(200);
    expect(older.headers.get('deprecation')).toBe('true');
    expect(older.body.id).toBe(id);
  });

  it('tests a decision without a run: the spec’s result shape; 400 for another step type, 404 for none', async () => {
    const made = await create({ slug: 'decide', name: 'Decide', trigger: { type: 'on-demand' }, steps: steps() });
    const url = (stepId: string) => `${base()}/orchestrations/${made.body.id}/steps/${stepId}/test-decision`;
    const big = await call('POST', url('route'), {
      token,
      body: { testData: { steps: { charge: { output: { amount: 150 } } } } },
    });
    expect(big.status).toBe(200);
    expect(big.body).toEqual({
      evaluatedCases: 1,
      matchedCaseIndex: 0,
      selectedNextStepId: 'cool-off',
      evaluations: [
        {
          caseIndex: 0,
          nextStepId: 'cool-off',
          matched: true,
          conditions: [
            {
              path: 'steps.charge.output.amount',
              operator: 'gt',
              expectedValue: 100,
              valuePath: null,
              actualValue: 150,
              pathExists: true,
              matched: true,
              error: null,
            },
          ],
        },
      ],
    });
    const none = await call('POST', url('route'), { token, body: { testData: { anything: 1 } } });
    expect(none.body).toMatchObject({ matchedCaseIndex: -1, selectedNextStepId: null });
    expect(none.body.evaluations[0].conditions[0]).toMatchObject({ pathExists: false, matched: false });
    expect((await call('POST', url('charge'), { token, body: { testData: {} } })).status).toBe(400);
    expect((await call('POST', url('nope'), { token, body: { testData: {} } })).status).toBe(404);
    expect((await call('POST', url('route'), { token, body: {} })).status).toBe(400);
    expect((await call('POST', url('route'), { token, body: { testData: [1] } })).status).toBe(400);
    const list = await call('GET', `${base()}/orchestrations?pageSize=100`, { token });
    expect(list.body.meta.total).toBe(5);
  });

  it('deletes with 204, then 404', async () => {
    expect((await call('DELETE', `${base()}/orchestrations/${id}`, { token })).status).toBe(204);
    const gone = await call('GET', `${base()}/orchestrations/${id}`, { token });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ message: 'Orchestration not found' });
    expect((await call('DELETE', `${base()}/orchestrations/${id}`, { token })).status).toBe(404);
  });
});
