import { expect } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { recordEventsStream } from '@strata/contracts';
import { eventually } from '@strata/testing';
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

/**
 * Waits until the webhooks consumer has read and acked every record event so far, and no
 * delivery of the workspace is retrying: after this, nothing more will be sent unless
 * something new happens.
 */
export async function settled(stack: Stack, api: WorkspaceApi): Promise<void> {
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  try {
    const jsm = await jetstreamManager(nc);
    await eventually(async () => {
      const info = await jsm.consumers.info(recordEventsStream(stack.natsPrefix).name, `${stack.natsPrefix}_webhooks`);
      if (info.num_pending !== 0 || info.num_ack_pending !== 0) return undefined;
      const retrying = await api('GET', '/webhook-subscriptions/deliveries/recent?status=retrying&limit=1');
      return retrying.body.data.length === 0 ? true : undefined;
    }, 20_000);
  } finally {
    await nc.close();
  }
}
