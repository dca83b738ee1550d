import { expect } from '@jest/globals';
import { call, type Stack } from '@strata/testkit';

/** Settings of the webhook test stacks: loopback receivers allowed, and a schedule shortened for tests only. */
export const WEBHOOK_TEST_SETTINGS = {
  WEBHOOKS_ALLOW_PRIVATE_RECEIVERS: 'true',
  WEBHOOKS_RETRY_DELAYS_MS: '400,400,400,400',
  WEBHOOKS_ATTEMPT_TIMEOUT_MS: '1500',
  WEBHOOKS_DISPATCH_INTERVAL_MS: '100',
  WEBHOOKS_BREAKER_RESET_MS: '1000',
  DATA_OUTBOX_INTERVAL_MS: '50',
};

/** API calls of one workspace through the gateway. */
export function workspaceApi(stack: Stack, workspace: string, token: string) {
  const base = `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
  return (method: string, path: string, body?: unknown, as = token) =>
    call(method, `${base}${path}`, { token: as, ...(body !== undefined ? { body } : {}) });
}

export type WorkspaceApi = ReturnType<typeof workspaceApi>;

/** A collection with a couple of properties; answers its id. */
export async function createCollection(api: WorkspaceApi, name: string): Promise<{ id: string; recordSlug: string }> {
  const res = await api('POST', '/structures', {
    name,
    properties: [
      { name: 'title', type: 'string' },
      { name: 'total', type: 'number' },
    ],
  });
  expect(res.status).toBe(200);
  return { id: res.body.id, recordSlug: res.body.recordSlug };
}

export async function createSubscription(
  api: WorkspaceApi,
  body: { url: string; events: string[]; recordSlugs?: string[]; name?: string },
): Promise<{ id: string; secret: string }> {
  const res = await api('POST', '/webhook-subscriptions', { name: 'hook', ...body });
  expect(res.status).toBe(201);
  return { id: res.body.id, secret: res.body.secret };
}

export async function createRecord(api: WorkspaceApi, structureId: string, data: Record<string, unknown>) {
  const res = await api('POST', '/records', { structureId, data });
  expect(res.status).toBe(201);
  return res.body as { id: string; data: Record<string, unknown> };
}
