import { setTimeout as idle } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Issue 13: a burst of PATCHes right after bulk writes once got a 502 from the
 * gateway. Its keep-alive agent kept idle sockets to the data service until the
 * service closed them, and a request sent on one as it closed failed. Here the
 * services keep idle connections 2 s (and close them 1 s later, Node's buffer);
 * the gateway must drop its idle sockets first (1 s before the announced 2 s).
 * The idle periods are the scenario: around the gateway's drop and around the
 * service's close, after bulk writes left many sockets idle.
 */
let stack: Stack;
let token: string;
const ws = `ka-${Date.now().toString(36)}`;
const KEEP_ALIVE_MS = 2000;

beforeAll(async () => {
  stack = await startStack({
    HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
    RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    RATE_LIMIT_BULK_PER_MINUTE: '100000',
  });
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

describe('gateway keep-alive to the services', () => {
  it('answers every PATCH of a burst after bulk writes and idle periods around the keep-alive timeout', async () => {
    const collection = await api('POST', '/structures', { name: 'Burst', schemaDiscoveryMode: 'schemaless' });
    expect(collection.status).toBe(200);
    const created = await api('POST', '/records/bulk', {
      structureId: collection.body.id,
      records: Array.from({ length: 30 }, (_, i) => ({ data: { n: i } })),
    });
    expect(created.status).toBe(200);
    const ids: string[] = created.body.records.map((r: { id: string }) => r.id);

    const failures: string[] = [];
    // Around the gateway's own drop (announced 2 s less 1 s) and around the service's close (2 s + 1 s).
    for (const idleMs of [1000, 2925, 2950, 2975, 3000, 3025]) {
      // Bulk writes in parallel leave many sockets to the data service idle at once.
      const bulk = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          api('POST', '/records/bulk', { structureId: collection.body.id, records: [{ data: { bulk: i } }] }),
        ),
      );
      expect(bulk.map((r) => r.status)).toEqual(bulk.map(() => 200));
      await idle(idleMs);
      const burst = await Promise.all(
        ids.map((id, i) => api('PATCH', `/records/${id}`, { data: { round: idleMs, i } })),
      );
      for (const res of burst) {
        if (res.status !== 200) failures.push(`after ${idleMs} ms idle: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
