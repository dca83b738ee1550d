import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Workspace B's administrator, through B's own URLs, names workspace A's
 * resources by their ids and slugs on every route that reads, changes or
 * deletes one. Each is answered as if the resource did not exist (404, or a
 * per-item not-found in bulk answers), and afterwards A's data is exactly as
 * it was: nothing changed, nothing was added to its history.
 */
let stack: Stack;
const stamp = Date.now().toString(36);
const a = { ws: `iso-a-${stamp}`, token: '' };
const b = { ws: `iso-b-${stamp}`, token: '' };

const data = (ws: string) => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const iam = (ws: string) => `${stack.authUrl}/workspace/${ws}/api/v1`;
const asA = (method: string, path: string, body?: unknown) =>
  call(method, `${data(a.ws)}${path}`, { token: a.token, ...(body !== undefined ? { body } : {}) });
const asB = (method: string, path: string, body?: unknown) =>
  call(method, `${data(b.ws)}${path}`, { token: b.token, ...(body !== undefined ? { body } : {}) });
const iamA = (method: string, path: string, body?: unknown) =>
  call(method, `${iam(a.ws)}${path}`, { token: a.token, ...(body !== undefined ? { body } : {}) });
const iamB = (method: string, path: string, body?: unknown) =>
  call(method, `${iam(b.ws)}${path}`, { token: b.token, ...(body !== undefined ? { body } : {}) });

interface Seeded {
  collection: { id: string; recordSlug: string };
  discovered: { id: string; recordSlug: string };
  record: string;
  savedQuery: string;
  suggestion: string;
  group: string;
  policy: string;
  serviceAccount: { id: number; clientId: string };
  publishableKey: string;
  subscription: string;
}
let seeded: Seeded;

beforeAll(async () => {
  stack = await startStack({ WEBHOOKS_ALLOW_PRIVATE_RECEIVERS: 'true' });
  a.token = await adminWorkspaceToken(stack, a.ws);
  b.token = await adminWorkspaceToken(stack, b.ws);

  const collection = (
    await asA('POST', '/structures', {
      name: 'Accounts',
      enableVersioning: true,
      properties: [
        { name: 'owner', type: 'string', required: true },
        { name: 'balance', type: 'number' },
      ],
    })
  ).body;
  const record = (await asA('POST', '/records', { structureId: collection.id, data: { owner: 'ada', balance: 1 } }))
    .body.id;
  expect((await asA('PATCH', `/records/${record}`, { data: { balance: 2 } })).status).toBe(200);
  const savedQuery = (
    await asA('POST', '/saved-queries', {
      name: 'rich',
      query: { resource: collection.recordSlug, where: { 'data.balance': { gt: 0 } } },
    })
  ).body.id;
  const discovered = (
    await asA('POST', '/structures', {
      name: 'Loose',
      schemaDiscoveryMode: 'auto-evolving',
      properties: [],
    })
  ).body;
  expect((await asA('POST', '/records', { structureId: discovered.id, data: { colour: 'red' } })).status).toBe(201);
  const suggestion = (await asA('GET', `/structures/${discovered.recordSlug}/schema-suggestions`)).body[0].id;
  const group = (await iamA('POST', '/groups', { name: 'readers' })).body.id;
  const policy = (await iamA('POST', `/groups/${group}/policies`, { resource: 'records', actions: ['list'] })).body.id;
  const serviceAccount = (await iamA('POST', '/service-accounts', { name: 'robot' })).body;
  const publishableKey = (await iamA('POST', '/publishable-keys', { name: 'site', permissions: ['records:list'] })).body
    .id;
  const subscription = (
    await asA('POST', '/webhook-subscriptions', {
      name: 'hook',
      url: 'http://127.0.0.1:9/hook',
      events: ['record_created'],
    })
  ).body.id;
  seeded = {
    collection,
    discovered,
    record,
    savedQuery,
    suggestion,
    group,
    policy,
    serviceAccount,
    publishableKey,
    subscription,
  };
  for (const [name, value] of Object.entries(seeded)) expect([name, value]).toEqual([name, expect.anything()]);
});

afterAll(async () => {
  await stack?.stop();
});

/** A's resources as A sees them, to compare before and after B's attempts. */
async function snapshotOfA() {
  const { collection, discovered, record, savedQuery, group, subscription, serviceAccount } = seeded;
  return {
    collection: (await asA('GET', `/structures/${collection.id}`)).body,
    record: (await asA('GET', `/records/${record}`)).body,
    history: (await asA('GET', `/records/${record}/history`)).body,
    changelog: (await asA('GET', `/records/${record}/changelog`)).body,
    list: (await asA('GET', `/records/slug/${collection.recordSlug}`)).body.results,
    savedQuery: (await asA('POST', `/saved-queries/${savedQuery}/execute`, {})).body,
    suggestions: (await asA('GET', `/structures/${discovered.recordSlug}/schema-suggestions`)).body,
    group: (await iamA('GET', `/groups/${group}`)).body,
    serviceAccount: (await iamA('GET', `/service-accounts/${serviceAccount.id}`)).body,
    keys: (await iamA('GET', '/publishable-keys')).body,
    subscription: (await asA('GET', '/webhook-subscriptions')).body.data.find(
      (s: { id: string }) => s.id === subscription,
    ),
  };
}

describe('workspace isolation', () => {
  it("answers 404 for every record route that names another workspace's record", async () => {
    const before = await snapshotOfA();
    const { record, collection } = seeded;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/records/${record}`],
      ['GET', `/records/${record}?version=1`],
      ['GET', `/records/${record}?includeHistory=true&includeChangelog=true`],
      ['GET', `/records/${record}/history`],
      ['GET', `/records/${record}/changelog`],
      ['POST', `/records/${record}/restore`, { version: 1 }],
      ['PATCH', `/records/${record}`, { data: { balance: 1000 } }],
      ['PUT', `/records/${record}`, { data: { owner: 'mallory' } }],
      ['DELETE', `/records/${record}`],
      ['DELETE', `/records/${record}?permanent=true`],
      ['GET', `/records?structureId=${collection.id}`],
      ['GET', `/records/slug/${collection.recordSlug}`],
      ['POST', '/records', { structureId: collection.id, data: { owner: 'mallory' } }],
      ['POST', `/records/slug/${collection.recordSlug}/upsert`, { match: { owner: 'ada' }, data: { balance: 0 } }],
      ['POST', '/records/query', { resource: collection.recordSlug }],
      ['POST', '/query', { query: `FROM ${collection.recordSlug}` }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await asB(method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it("reports another workspace's records as not found, item by item, in bulk requests", async () => {
    const before = await snapshotOfA();
    const { record, collection } = seeded;
    const patched = await asB('PATCH', '/records/bulk', { updates: [{ id: record, data: { balance: 1000 } }] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      updated: 0,
      failed: 1,
      errors: [{ index: 0, id: record, error: { code: 'RECORD_NOT_FOUND' } }],
    });
    const deleted = await asB('DELETE', '/records/bulk', { ids: [record], permanent: true });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      deleted: 0,
      failed: 1,
      errors: [{ index: 0, id: record, error: { code: 'RECORD_NOT_FOUND' } }],
    });
    for (const path of ['/records/bulk', '/records/batch']) {
      const created = await asB('POST', path, { structureId: collection.id, records: [{ data: { owner: 'x' } }] });
      expect([path, created.status]).toEqual([path, 404]);
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it("answers 404 for another workspace's collections, saved queries and schema suggestions", async () => {
    const before = await snapshotOfA();
    const { collection, discovered, savedQuery, suggestion } = seeded;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/structures/${collection.id}`],
      ['GET', `/collections/${collection.id}`],
      ['GET', `/structures/slug/${collection.recordSlug}`],
      ['PUT', `/structures/${collection.id}`, { name: 'Taken' }],
      ['DELETE', `/structures/${collection.id}`],
      ['POST', `/saved-queries/${savedQuery}/execute`, {}],
      ['POST', `/saved-queries/${collection.recordSlug}/${savedQuery}/execute`, {}],
      ['GET', `/saved-queries/${collection.recordSlug}`],
      ['GET', `/structures/${discovered.recordSlug}/schema-suggestions`],
      ['POST', `/structures/${discovered.recordSlug}/schema-suggestions/${suggestion}/accept`],
      ['POST', `/structures/${discovered.recordSlug}/schema-suggestions/${suggestion}/reject`],
      ['POST', `/structures/${discovered.recordSlug}/schema-discovery/scan`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await asB(method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    // B's own collection of the same slug does not reach A's suggestions either.
    const mine = (
      await asB('POST', '/structures', {
        name: 'Loose',
        schemaDiscoveryMode: 'auto-evolving',
        properties: [],
      })
    ).body;
    expect(mine.recordSlug).toBe(discovered.recordSlug);
    const accept = await asB('POST', `/structures/${mine.recordSlug}/schema-suggestions/${suggestion}/accept`);
    expect(accept.status).toBe(404);
    expect(await snapshotOfA()).toEqual(before);
  });

  it("answers 404 for another workspace's groups, policies, members, service accounts and keys", async () => {
    const before = await snapshotOfA();
    const { group, policy, serviceAccount, publishableKey } = seeded;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/groups/${group}`],
      ['PATCH', `/groups/${group}`, { description: 'taken' }],
      ['DELETE', `/groups/${group}`],
      ['POST', `/groups/${group}/policies`, { resource: 'structures', actions: ['list'] }],
      ['PUT', `/groups/${group}/policies/${policy}`, { actions: ['list', 'retrieve'] }],
      ['DELETE', `/groups/${group}/policies/${policy}`],
      ['POST', `/groups/${group}/members`, { type: 'service_account', id: serviceAccount.clientId }],
      ['DELETE', `/groups/${group}/members/service_account/${serviceAccount.clientId}`],
      ['GET', `/service-accounts/${serviceAccount.id}`],
      ['PUT', `/service-accounts/${serviceAccount.id}/name`, { name: 'taken' }],
      ['POST', `/service-accounts/${serviceAccount.id}/rotate`],
      ['POST', `/service-accounts/${serviceAccount.id}/revoke`],
      ['DELETE', `/service-accounts/${serviceAccount.id}`],
      ['POST', `/publishable-keys/${publishableKey}/revoke`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await iamB(method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    // B cannot add A's service account to a group of its own either.
    const mine = (await iamB('POST', '/groups', { name: 'mine' })).body.id;
    const added = await iamB('POST', `/groups/${mine}/members`, {
      type: 'service_account',
      id: serviceAccount.clientId,
    });
    expect(added.status).toBe(404);
    expect(await snapshotOfA()).toEqual(before);
  });

  it("answers 404 for another workspace's webhook subscriptions and deliveries", async () => {
    const before = await snapshotOfA();
    const { subscription } = seeded;
    const attempts: [string, string, unknown?][] = [
      ['PATCH', `/webhook-subscriptions/${subscription}`, { active: false }],
      ['POST', `/webhook-subscriptions/${subscription}/rotate-secret`],
      ['POST', `/webhook-subscriptions/${subscription}/test`, { event: 'record_created', payload: {} }],
      ['GET', `/webhook-subscriptions/${subscription}/health`],
      ['GET', `/webhook-subscriptions/${subscription}/deliveries`],
      ['GET', `/webhook-subscriptions/${subscription}/deliveries/${randomUUID()}`],
      ['DELETE', `/webhook-subscriptions/${subscription}`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await asB(method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    expect(await snapshotOfA()).toEqual(before);
  });
});
