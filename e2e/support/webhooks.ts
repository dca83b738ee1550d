import { expect } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { routedDurableName, routedRecordEventsStream } from '@strata/contracts';
import { eventually, type ManualClock } from '@strata/testing';
import { call, type Stack } from '@strata/testkit';

/**
 * Settings of the webhook test stacks: loopback receivers allowed and quick looks for
 * due work. The schedule and the breaker are the production ones: the stacks run the
 * webhooks service on a `ManualClock`, and tests move it past a delay instead of
 * shortening the delay. The attempt timeout, a real-time deadline on a real request,
 * is the longest the settings allow, so a receiver that answers is never timed out by
 * a busy machine (the receivers run in the test process); tests whose receiver never
 * answers restart the service with `SHORT_TIMEOUT` around that attempt.
 */
export const WEBHOOK_TEST_SETTINGS = {
  WEBHOOKS_ALLOW_PRIVATE_RECEIVERS: 'true',
  WEBHOOKS_DISPATCH_INTERVAL_MS: '100',
  WEBHOOKS_ATTEMPT_TIMEOUT_MS: '60000',
  DATA_OUTBOX_INTERVAL_MS: '50',
};

/** The spec's delays before attempts 2, 3, 4 and 5. */
export const RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000] as const;

/** A short attempt timeout, for the attempt of a receiver that never answers (see above). */
export const SHORT_TIMEOUT = { WEBHOOKS_ATTEMPT_TIMEOUT_MS: '1000' };

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
 * Waits until the webhooks consumer has read and acked every record event routed to it so far, and no
 * delivery of the subscription is retrying: after this, nothing more will be sent to it
 * unless something new happens.
 */
export async function settled(stack: Stack, api: WorkspaceApi, subscriptionId: string): Promise<void> {
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  try {
    const jsm = await jetstreamManager(nc);
    await eventually(async () => {
      const info = await jsm.consumers.info(
        routedRecordEventsStream(stack.natsPrefix).name,
        routedDurableName(stack.natsPrefix, 'webhooks'),
      );
      if (info.num_pending !== 0 || info.num_ack_pending !== 0) return undefined;
      // The workspace's list (not the subscription's, which a deleted subscription no longer has).
      const retrying = await api('GET', '/webhook-subscriptions/deliveries/recent?status=retrying&limit=100');
      const rows = retrying.body.data as { subscriptionId: string }[];
      return rows.some((d) => d.subscriptionId === subscriptionId) ? undefined : true;
    }, 20_000);
  } finally {
    await nc.close();
  }
}

/** A delivery's detail (with its attempts). */
export async function deliveryDetail(api: WorkspaceApi, subscriptionId: string, deliveryId: string) {
  const res = await api('GET', `/webhook-subscriptions/${subscriptionId}/deliveries/${deliveryId}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Waits until `count` attempts of the delivery are recorded (sent and answered, or rejected), and answers its detail. */
export async function attemptsRecorded(api: WorkspaceApi, subscriptionId: string, deliveryId: string, count: number) {
  return eventually(async () => {
    const d = await deliveryDetail(api, subscriptionId, deliveryId);
    return d.attempts.length >= count ? d : undefined;
  }, 20_000);
}

/** Waits until the delivery has `status`, and answers its detail. */
export async function deliveryStatus(api: WorkspaceApi, subscriptionId: string, deliveryId: string, status: string) {
  return eventually(async () => {
    const d = await deliveryDetail(api, subscriptionId, deliveryId);
    return d.status === status ? d : undefined;
  }, 20_000);
}

/**
 * Runs a delivery through its schedule from attempt `from` on: waits until each
 * attempt is recorded, then moves the clock to the next one's due time, until the
 * delivery ends. Answers its detail.
 */
export async function runSchedule(
  api: WorkspaceApi,
  clock: ManualClock,
  subscriptionId: string,
  deliveryId: string,
  from = 1,
) {
  for (let attempt = from; ; attempt++) {
    const d = await attemptsRecorded(api, subscriptionId, deliveryId, attempt);
    if (d.status !== 'retrying') return d;
    expect(Date.parse(d.nextAttemptAt)).toBe(clock.now().getTime() + RETRY_DELAYS_MS[attempt - 1]!);
    clock.advance(RETRY_DELAYS_MS[attempt - 1]!);
  }
}
