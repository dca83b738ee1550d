import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, serviceAccountToken, startStack, type Stack } from '@strata/testkit';
import { Receivers } from './support/webhook-receiver.js';
import { WEBHOOK_TEST_SETTINGS, settled, workspaceApi, type WorkspaceApi } from './support/webhooks.js';

/**
 * Permissions scoped to collections (docs/identity.md): a service account whose
 * group's `records` policy names one collection reads and writes that one, and
 * finds the other absent (404, as a collection or record that does not exist)
 * through every route that reaches records, in queries, in the events its
 * subscriptions receive, and in the `api` calls of functions when the function
 * principal is scoped the same way.
 */
let stack: Stack;
let admin: WorkspaceApi;
let scoped: WorkspaceApi;
let scopedToken: string;
const receivers = new Receivers();
const suffix = Date.now().toString(36);
const ws = `scoped-${suffix}`;
const iam = () => `${stack.authUrl}/workspace/${ws}/api/v1`;
let shown: { id: string; recordSlug: string };
let hidden: { id: string; recordSlug: string };
let shownRecord: string;
let hiddenRecord: string;
let adminToken: string;

/** The error code of a data-service answer (the records and query areas nest it under `error`). */
const codeOf = (res: { body: any }): string | undefined => res.body?.code ?? res.body?.error?.code;
const messageOf = (res: { body: any }): string | undefined => res.body?.message ?? res.body?.error?.message;

beforeAll(async () => {
  stack = await startStack({ ...WEBHOOK_TEST_SETTINGS, PERMISSION_CACHE_TTL_MS: '500' });
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1' });
  adminToken = await adminWorkspaceToken(stack, ws);
  admin = workspaceApi(stack, ws, adminToken);
  const create = async (recordSlug: string) => {
    const res = await admin('POST', '/structures', {
      name: recordSlug,
      recordSlug,
      properties: [
        { name: 'title', type: 'string' },
        { name: 'n', type: 'number' },
        ...(recordSlug === 'shown'
          ? [
              {
                name: 'other',
                type: 'reference',
                target: 'hidden',
                relationship: 'many-to-one',
                onDelete: 'set_null',
                nullable: true,
              },
            ]
          : []),
      ],
    });
    expect(res.status).toBe(200);
    return { id: res.body.id as string, recordSlug: res.body.recordSlug as string };
  };
  hidden = await create('hidden');
  shown = await create('shown');
  hiddenRecord = (await admin('POST', '/records', { structureId: hidden.id, data: { title: 'h', n: 1 } })).body.id;
  const made = await admin('POST', '/records', {
    structureId: shown.id,
    data: { title: 's', n: 1, other: hiddenRecord },
  });
  expect(made.status).toBe(201);
  shownRecord = made.body.id;
  // A second version of the hidden record, for the version and restore routes.
  expect((await admin('PATCH', `/records/${hiddenRecord}`, { data: { n: 2 } })).status).toBe(200);
  scopedToken = await serviceAccountToken(stack, ws, adminToken, {
    name: 'shown-only',
    resource: 'records',
    actions: ['create', 'retrieve', 'list', 'update', 'delete'],
    collections: ['shown'],
    morePolicies: [
      { resource: 'saved-queries', actions: ['create', 'retrieve', 'list', 'execute'] },
      { resource: 'webhook-subscriptions', actions: ['create', 'retrieve', 'list'] },
    ],
  });
  scoped = workspaceApi(stack, ws, scopedToken);
});

afterAll(async () => {
  await receivers.stopAll();
  await stack?.stop();
});

describe('policies naming collections', () => {
  it('answers the scoped permissions in permissions/me and validates the list', async () => {
    const me = await call('GET', `${iam()}/permissions/me`, { token: scopedToken });
    expect(me.status).toBe(200);
    expect(me.body.permissions).not.toContain('records:list');
    expect(me.body.collectionPermissions).toEqual({
      'records:create': ['shown'],
      'records:delete': ['shown'],
      'records:list': ['shown'],
      'records:retrieve': ['shown'],
      'records:update': ['shown'],
    });
    // What a member may see is asked by the services as the function principal, by nobody else.
    const memberUrl = `${stack.authUrl}/internal/workspaces/${ws}/principals/service_account/${me.body.principal.id}/permissions`;
    for (const token of [scopedToken, adminToken]) {
      expect((await call('GET', memberUrl, { token })).status).toBe(403);
    }
    const group = (await call('POST', `${iam()}/groups`, { token: adminToken, body: { name: 'checks' } })).body;
    const policies = `${iam()}/groups/${group.id}/policies`;
    const post = (body: unknown) => call('POST', policies, { token: adminToken, body });
    const notRecords = await post({ resource: 'structures', actions: ['list'], collections: ['shown'] });
    expect(notRecords.status).toBe(400);
    expect(notRecords.body.details).toEqual([{ field: 'collections', message: expect.stringContaining('records') }]);
    const empty = await post({ resource: 'records', actions: ['list'], collections: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.details[0].field).toBe('collections');
    const badSlug = await post({ resource: 'records', actions: ['list'], collections: ['Not A Slug'] });
    expect(badSlug.status).toBe(400);
    expect(badSlug.body.details[0].field).toMatch(/^collections/);
    const ok = await post({ resource: 'records', actions: ['list'], collections: ['shown'] });
    expect(ok.status).toBe(201);
    expect(ok.body.collections).toEqual(['shown']);
    // A PUT of the actions alone keeps the collections; null widens to every collection.
    const kept = await call('PUT', `${policies}/${ok.body.id}`, { token: adminToken, body: { actions: ['list'] } });
    expect(kept.body.collections).toEqual(['shown']);
    const widened = await call('PUT', `${policies}/${ok.body.id}`, {
      token: adminToken,
      body: { actions: ['list'], collections: null },
    });
    expect(widened.body.collections).toBeNull();
  });
});

describe('the records API', () => {
  it('reads and writes the named collection', async () => {
    const created = await scoped('POST', '/records', { structureId: shown.id, data: { title: 'mine', n: 3 } });
    expect(created.status).toBe(201);
    expect((await scoped('GET', `/records/${created.body.id}`)).status).toBe(200);
    expect((await scoped('GET', `/records/slug/shown`)).status).toBe(200);
    expect((await scoped('PATCH', `/records/${created.body.id}`, { data: { n: 4 } })).status).toBe(200);
    expect((await scoped('GET', `/records/${created.body.id}/history`)).status).toBe(200);
    expect((await scoped('DELETE', `/records/${created.body.id}`)).status).toBe(200);
  });

  it('answers every route on the other collection as on one that does not exist', async () => {
    const missingRecord = '00000000-0000-4000-8000-000000000000';
    const missingCollection = '00000000-0000-4000-8000-000000000001';
    // What a collection and a record that do not exist get, for comparison.
    const noCollection = await scoped('POST', '/records', { structureId: missingCollection, data: { title: 'x' } });
    const noRecord = await scoped('GET', `/records/${missingRecord}`);
    expect([noCollection.status, codeOf(noCollection)]).toEqual([404, 'STRUCTURE_NOT_FOUND']);
    expect([noRecord.status, codeOf(noRecord)]).toEqual([404, 'RECORD_NOT_FOUND']);

    const byCollection: [string, string, unknown?][] = [
      ['POST', '/records', { structureId: hidden.id, data: { title: 'x' } }],
      ['GET', `/records?structureId=${hidden.id}`],
      ['GET', '/records/slug/hidden'],
      ['POST', '/records/bulk', { structureId: hidden.id, records: [{ data: { title: 'x' } }] }],
      ['POST', '/records/batch', { structureId: hidden.id, records: [{ data: { title: 'x' } }] }],
      ['POST', '/records/slug/hidden/upsert', { match: { title: 'h' }, data: { title: 'h', n: 9 } }],
    ];
    for (const [method, path, body] of byCollection) {
      const res = await scoped(method, path, body);
      expect([method, path, res.status, codeOf(res)]).toEqual([method, path, 404, 'STRUCTURE_NOT_FOUND']);
    }
    const byRecord: [string, string, unknown?][] = [
      ['GET', `/records/${hiddenRecord}`],
      ['GET', `/records/${hiddenRecord}?version=1`],
      ['PATCH', `/records/${hiddenRecord}`, { data: { n: 5 } }],
      ['PUT', `/records/${hiddenRecord}`, { data: { title: 'h', n: 5 } }],
      ['DELETE', `/records/${hiddenRecord}`],
      ['GET', `/records/${hiddenRecord}/history`],
      ['GET', `/records/${hiddenRecord}/changelog`],
      ['POST', `/records/${hiddenRecord}/restore`, { version: 1 }],
    ];
    for (const [method, path, body] of byRecord) {
      const res = await scoped(method, path, body);
      expect([method, path, res.status, codeOf(res), messageOf(res)]).toEqual([
        method,
        path,
        404,
        'RECORD_NOT_FOUND',
        messageOf(noRecord)!.replace(missingRecord, hiddenRecord),
      ]);
    }
    // Bulk updates and deletes refuse the item as a record that does not exist.
    const bulkUpdate = await scoped('PATCH', '/records/bulk', { updates: [{ id: hiddenRecord, data: { n: 7 } }] });
    expect(bulkUpdate.body.errors).toEqual([
      expect.objectContaining({ id: hiddenRecord, error: expect.objectContaining({ code: 'RECORD_NOT_FOUND' }) }),
    ]);
    const bulkDelete = await scoped('DELETE', '/records/bulk', { ids: [hiddenRecord] });
    expect(bulkDelete.body.errors).toEqual([
      expect.objectContaining({ id: hiddenRecord, error: expect.objectContaining({ code: 'RECORD_NOT_FOUND' }) }),
    ]);
    // Nothing was written: the record is as the administrator left it.
    const still = await admin('GET', `/records/${hiddenRecord}`);
    expect([still.status, still.body.data.n, still.body.version]).toEqual([200, 2, 2]);
    expect((await admin('GET', '/records/slug/hidden')).body.results).toHaveLength(1);
  });

  it('expands a reference into the other collection to null, as a record that does not exist', async () => {
    const mine = await scoped('GET', `/records/${shownRecord}?expand=other`);
    expect(mine.status).toBe(200);
    expect(mine.body.data.other).toBe(hiddenRecord);
    expect(mine.body.data._expanded).toEqual({ other: null });
    const theirs = await admin('GET', `/records/${shownRecord}?expand=other`);
    expect(theirs.body.data._expanded.other).toMatchObject({ id: hiddenRecord });
  });
});

describe('queries', () => {
  it('finds the other collection absent in POST /records/query, joins, /query and INCLUDE', async () => {
    const query = await scoped('POST', '/records/query', { resource: 'hidden' });
    expect([query.status, codeOf(query)]).toEqual([404, 'STRUCTURE_NOT_FOUND']);
    expect((await scoped('POST', '/records/query', { resource: 'shown' })).status).toBe(200);
    const join = (foreignSlug: string, as = scoped) =>
      as('POST', '/records/query', {
        resource: 'shown',
        joins: [{ foreignSlug, localField: 'other', foreignField: 'id', alias: 'h' }],
      });
    const joinedHidden = await join('hidden');
    const joinedMissing = await join('nowhere');
    expect(joinedHidden.status).toBe(400);
    expect(joinedHidden.body.error.details).toEqual([
      { field: 'joins[0].foreignSlug', message: 'names no collection in this workspace: "hidden"' },
    ]);
    expect(joinedMissing.body.error.details[0].message).toBe('names no collection in this workspace: "nowhere"');
    const adminJoin = await join('hidden', admin);
    expect(adminJoin.status).toBe(200);
    expect(adminJoin.body.data[0]._joined.h).toMatchObject({ id: hiddenRecord });

    const language = (q: string) => scoped('POST', '/query', { query: q });
    const from = await language('FROM hidden');
    expect([from.status, codeOf(from)]).toEqual([404, 'STRUCTURE_NOT_FOUND']);
    const include = await language('FROM shown INCLUDE other FROM hidden');
    expect([include.status, codeOf(include)]).toEqual([404, 'STRUCTURE_NOT_FOUND']);
    expect((await language('FROM shown')).status).toBe(200);
    const adminInclude = await call('POST', `${stack.baseUrl}/data/workspace/${ws}/api/v1/query`, {
      token: adminToken,
      body: { query: 'FROM shown INCLUDE other FROM hidden' },
    });
    expect(adminInclude.status).toBe(200);
  });

  it('executes and tests saved queries only on collections the caller may list', async () => {
    const onHidden = await admin('POST', '/saved-queries', { name: 'all-hidden', query: { resource: 'hidden' } });
    expect(onHidden.status).toBe(201);
    const joining = await admin('POST', '/saved-queries', {
      name: 'shown-with-hidden',
      query: {
        resource: 'shown',
        joins: [{ foreignSlug: 'hidden', localField: 'other', foreignField: 'id', alias: 'h' }],
      },
    });
    expect(joining.status).toBe(201);
    const exec = await scoped('POST', `/saved-queries/${onHidden.body.id}/execute`, {});
    expect([exec.status, codeOf(exec)]).toEqual([404, 'STRUCTURE_NOT_FOUND']);
    const execJoin = await scoped('POST', `/saved-queries/${joining.body.id}/execute`, {});
    expect(execJoin.status).toBe(400);
    expect(execJoin.body.error.details[0]).toEqual({
      field: 'joins[0].foreignSlug',
      message: 'names no collection in this workspace: "hidden"',
    });
    expect((await admin('POST', `/saved-queries/${joining.body.id}/execute`, {})).status).toBe(200);
    const test = await scoped('POST', '/saved-queries/hidden/test', { query: { where: { 'data.nope': { eq: 1 } } } });
    expect([test.status, codeOf(test)]).toEqual([404, 'STRUCTURE_NOT_FOUND']);
    const testJoin = await scoped('POST', '/saved-queries/shown/test', {
      query: { joins: [{ foreignSlug: 'hidden', localField: 'other', foreignField: 'nope', alias: 'h' }] },
    });
    expect(testJoin.status).toBe(400);
    expect(testJoin.body.error.details).toEqual([
      { field: 'query.joins[0].foreignSlug', message: 'names no collection in this workspace: "hidden"' },
    ]);
    expect((await scoped('POST', '/saved-queries/shown/test', { query: {} })).status).toBe(200);
  });
});

describe('webhook subscriptions', () => {
  it("deliver only the events of collections the subscription's owner may list", async () => {
    const receiver = await receivers.start();
    const sub = await scoped('POST', '/webhook-subscriptions', {
      name: 'scoped owner',
      url: receiver.url(),
      events: ['record_created'],
    });
    expect(sub.status).toBe(201);
    const adminSub = await admin('POST', '/webhook-subscriptions', {
      name: 'admin owner',
      url: receiver.url('/admin'),
      events: ['record_created'],
    });
    expect(adminSub.status).toBe(201);
    const hiddenMade = (await admin('POST', '/records', { structureId: hidden.id, data: { title: 'later' } })).body.id;
    const shownMade = (await admin('POST', '/records', { structureId: shown.id, data: { title: 'later' } })).body.id;
    // The administrator's subscription gets both: by then the scoped one has had every chance to.
    await receiver.waitFor((a) => a.path === '/admin', 2);
    await settled(stack, admin, sub.body.id);
    const got = receiver.arrivals
      .filter((a) => a.path === '/hook')
      .map((a) => (a.body as { recordId: string }).recordId);
    expect(got).toEqual([shownMade]);
    expect(got).not.toContain(hiddenMade);
  });
});

describe('functions under a scoped function principal', () => {
  it("get the other collection's records as absent through api", async () => {
    const groups = (await call('GET', `${iam()}/groups`, { token: adminToken })).body.data as {
      id: string;
      name: string;
      policies: { id: string; resource: string }[];
    }[];
    const functions = groups.find((g) => g.name === 'compute-functions')!;
    const records = functions.policies.find((p) => p.resource === 'records')!;
    const scopedPolicy = await call('PUT', `${iam()}/groups/${functions.id}/policies/${records.id}`, {
      token: adminToken,
      body: { actions: ['manage'], collections: ['shown'] },
    });
    expect(scopedPolicy.status).toBe(200);
    const code = `async function run() {
      const theirs = await api.fetchRecord(executionParams.hidden);
      const mine = await api.fetchRecord(executionParams.shown);
      let created;
      try { await api.createRecord('hidden', { title: 'from a function' }); created = 'created'; }
      catch (err) { created = String(err && err.message); }
      let queried;
      try { await api.queryRecords({ resource: 'hidden' }); queried = 'queried'; }
      catch (err) { queried = String(err && err.message); }
      return { success: true, data: { theirs, mine: mine && mine.id, created, queried } };
    }`;
    // Within the permission cache's time the principal is scoped; a run started earlier may still see all.
    const result = await eventually(async () => {
      const r = await runFunction(code, { hidden: hiddenRecord, shown: shownRecord });
      return r.result?.data?.theirs === null ? r : undefined;
    }, 60_000);
    expect(result.status).toBe('succeeded');
    expect(result.result.data).toEqual({
      theirs: null,
      mine: shownRecord,
      created: expect.stringContaining('404'),
      queried: expect.stringContaining('404'),
    });
    expect((await admin('GET', '/records/slug/hidden')).body.results.map((r: any) => r.data.title)).not.toContain(
      'from a function',
    );
  });
});

/** Runs code through the test endpoint as the administrator, and answers its finished run. */
async function runFunction(code: string, params: unknown): Promise<Record<string, any>> {
  const queued = await admin('POST', '/compute-functions/test', { code, params });
  expect(queued.status).toBe(200);
  return eventually(async () => {
    const listed = await admin('GET', `/function-runs?jobId=${queued.body.jobId}`);
    const r = listed.body.runs[0];
    if (!r || ['queued', 'running'].includes(r.status)) return undefined;
    return (await admin('GET', `/function-runs/${r.id}`)).body as Record<string, any>;
  }, 45_000);
}
