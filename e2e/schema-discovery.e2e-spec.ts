import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const ws = `disc-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
});

afterAll(async () => {
  await stack?.stop();
});

const api = (method: string, path: string, body?: unknown) =>
  call(method, `${stack.baseUrl}/data/workspace/${ws}/api/v1${path}`, {
    token,
    ...(body !== undefined ? { body } : {}),
  });

describe('schema discovery', () => {
  it('suggests properties for the extra fields of an auto-evolving collection, and accept adds one', async () => {
    const c = await api('POST', '/structures', {
      name: 'Events',
      schemaDiscoveryMode: 'auto-evolving',
      properties: [{ name: 'kind', type: 'string' }],
    });
    for (let i = 0; i < 3; i++) {
      const r = await api('POST', '/records', {
        structureId: c.body.id,
        data: { kind: 'click', at: '2026-11-20T10:00:00Z', score: i, meta: { browser: 'x' } },
      });
      expect(r.status).toBe(201);
    }
    const listed = await api('GET', '/structures/events/schema-suggestions?status=pending');
    expect(listed.status).toBe(200);
    const byField = Object.fromEntries(listed.body.map((s: { field: string }) => [s.field, s]));
    expect(Object.keys(byField).sort()).toEqual(['at', 'meta', 'score']);
    expect(byField['at']).toMatchObject({
      suggestedProperty: { name: 'at', type: 'datetime' },
      occurrences: 3,
      status: 'pending',
    });
    expect(byField['meta'].suggestedProperty).toEqual({
      name: 'meta',
      type: 'object',
      properties: [{ name: 'browser', type: 'string' }],
    });

    const accepted = await api('POST', `/structures/events/schema-suggestions/${byField['score'].id}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body.suggestion.status).toBe('accepted');
    expect(accepted.body.collection.properties.map((p: { name: string }) => p.name)).toEqual(['kind', 'score']);
    // The accepted property now validates records.
    const bad = await api('POST', '/records', { structureId: c.body.id, data: { kind: 'x', score: 'high' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: 'data.score', message: 'must be a number' }]);

    const rejected = await api('POST', `/structures/events/schema-suggestions/${byField['meta'].id}/reject`);
    expect(rejected.body.status).toBe('rejected');
    const again = await api('POST', `/structures/events/schema-suggestions/${byField['meta'].id}/accept`);
    expect(again.status).toBe(409);
    expect(
      (await api('GET', '/structures/events/schema-suggestions?status=pending')).body.map(
        (s: { field: string }) => s.field,
      ),
    ).toEqual(['at']);
  });

  it('scans schemaless collections on demand, within the configured batch size', async () => {
    const c = await api('POST', '/structures', {
      name: 'Blobs',
      schemaDiscoveryMode: 'schemaless',
      schemaDiscoveryConfig: { batchSize: 2 },
      properties: [],
    });
    for (const data of [{ a: 1 }, { b: true }, { c: 'x' }]) {
      expect((await api('POST', '/records', { structureId: c.body.id, data })).status).toBe(201);
    }
    // Writes to schemaless collections suggest nothing by themselves.
    expect((await api('GET', '/structures/blobs/schema-suggestions')).body).toEqual([]);
    const scan = await api('POST', '/structures/blobs/schema-discovery/scan');
    expect(scan.body.scanned).toBe(2);
    const full = await api('POST', '/structures/blobs/schema-discovery/trigger');
    expect(full.body.scanned).toBe(3);
    expect(full.body.suggestions.map((s: { field: string }) => s.field).sort()).toEqual(['a', 'b', 'c']);
  });

  it('reads and changes the discovery settings, and refuses discovery on strict collections', async () => {
    await api('POST', '/structures', { name: 'Rigid', properties: [] });
    const settings = await api('GET', '/structures/rigid/schema-discovery');
    expect(settings.body).toEqual({
      recordSlug: 'rigid',
      schemaDiscoveryMode: 'strict',
      schemaDiscoveryConfig: { batchSize: 10, maxKeysPerRecord: 100, maxNestingDepth: 3, maxStringLengthSampled: 1000 },
    });
    expect((await api('POST', '/structures/rigid/schema-discovery/scan')).status).toBe(409);
    const changed = await api('PUT', '/structures/rigid/schema-discovery', {
      schemaDiscoveryMode: 'auto-evolving',
      schemaDiscoveryConfig: { maxNestingDepth: 2 },
    });
    expect(changed.body).toMatchObject({
      schemaDiscoveryMode: 'auto-evolving',
      schemaDiscoveryConfig: { batchSize: 10, maxNestingDepth: 2 },
    });
    const invalid = await api('PUT', '/structures/rigid/schema-discovery', { schemaDiscoveryConfig: { batchSize: 0 } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details[0].field).toBe('schemaDiscoveryConfig.batchSize');
  });
});
