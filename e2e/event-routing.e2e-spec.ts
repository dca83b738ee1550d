import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AckPolicy, DeliverPolicy, jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { recordEventSubject, recordEventsStream } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { publishAll } from '@strata/events';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';
import { Receivers, type WebhookReceiver } from './support/webhook-receiver.js';
import { StreamCounts } from './support/routed-events.js';
import {
  WEBHOOK_TEST_SETTINGS,
  createCollection,
  createRecord,
  createSubscription,
  workspaceApi,
  type WorkspaceApi,
} from './support/webhooks.js';

/**
 * Record events are routed to the consumers that registered an interest in their
 * workspace and collection (docs/events.md, "Routed events"), and to nobody else;
 * none is lost while an interest is being added.
 */
let stack: Stack;
let counts: StreamCounts;
let db: pg.Client;
const receivers = new Receivers();
const suffix = Date.now().toString(36);

beforeAll(async () => {
  stack = await startStack(WEBHOOK_TEST_SETTINGS);
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  counts = await StreamCounts.open();
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await receivers.stopAll();
  await counts?.close();
  await db?.end();
  await stack?.stop();
});

async function newWorkspace(name: string): Promise<{ ws: string; api: WorkspaceApi; token: string }> {
  const ws = `${name}-${suffix}`;
  const token = await adminWorkspaceToken(stack, ws);
  return { ws, api: workspaceApi(stack, ws, token), token };
}

/** The record ids the receiver got `record_created` deliveries for, with how many of each. */
function deliveredIds(hook: WebhookReceiver): Map<string, number> {
  const seen = new Map<string, number>();
  for (const a of hook.arrivals) {
    const id = a.body['recordId'];
    if (a.body['event'] === 'record_created' && typeof id === 'string') seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  return seen;
}

type Written = { id: string; createdAt: string };

/** Writers creating records in the collection until `stop()`; answers what they wrote. */
function writers(api: WorkspaceApi, structureId: string, parallel: number) {
  const written: Written[] = [];
  let stopped = false;
  const loops = Array.from({ length: parallel }, async () => {
    while (!stopped) {
      const r = (await createRecord(api, structureId, { title: 'x' })) as unknown as Written;
      written.push({ id: r.id, createdAt: r.createdAt });
    }
  });
  return {
    written,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return written;
    },
  };
}

/**
 * Writers create records in the collection; once a few exist, `create` makes what should see them
 * (answering its createdAt); then some more are written. Answers the records written after it.
 */
async function raceWith(api: WorkspaceApi, structureId: string, create: () => Promise<string>): Promise<Written[]> {
  const writing = writers(api, structureId, 3);
  await eventually(() => (writing.written.length >= 15 ? true : undefined), 30_000);
  const createdAt = Date.parse(await create());
  const before = writing.written.length;
  await eventually(() => (writing.written.length >= before + 30 ? true : undefined), 30_000);
  const written = await writing.stop();
  const owed = written.filter((r) => Date.parse(r.createdAt) > createdAt);
  expect(owed.length).toBeGreaterThanOrEqual(25);
  return owed;
}

/** How many of the listed items name each record id. */
function countBy(ids: string[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
  return seen;
}

const routedTo = (ws: string) => `${stack.natsPrefix}.routed.webhooks.${ws}.>`;
const recordsOf = (ws: string) => `${stack.natsPrefix}.records.${ws}.>`;

describe('routed record events', () => {
  it('delivers every record written after a subscription was created while records were being written, each once', async () => {
    const { api } = await newWorkspace('route-race');
    const hook = await receivers.start();
    const orders = await createCollection(api, 'Orders');
    const writing = writers(api, orders.id, 3);
    await eventually(() => (writing.written.length >= 15 ? true : undefined), 30_000);
    const sub = await createSubscription(api, {
      url: hook.url('/race'),
      events: ['record_created'],
      recordSlugs: [orders.recordSlug],
    });
    const subCreatedAt = Date.parse(
      (await api('GET', '/webhook-subscriptions')).body.data.find((s: { id: string }) => s.id === sub.id).createdAt,
    );
    const before = writing.written.length;
    await eventually(() => (writing.written.length >= before + 30 ? true : undefined), 30_000);
    const written = await writing.stop();

    const owed = written.filter((r) => Date.parse(r.createdAt) > subCreatedAt);
    expect(owed.length).toBeGreaterThanOrEqual(25);
    await eventually(() => {
      const got = deliveredIds(hook);
      return owed.every((r) => got.has(r.id)) ? true : undefined;
    }, 30_000);
    // Nothing twice (an event seen on two paths, or redelivered, makes one delivery).
    expect([...deliveredIds(hook).values()].every((n) => n === 1)).toBe(true);
  });

  it('starts a run of an orchestration created while records were being written for every record written after it, each once', async () => {
    const { ws, api, token } = await newWorkspace('route-orch');
    const c = await createCollection(api, 'Tickets');
    const orch = `${stack.baseUrl}/orchestration/ws/${ws}/api/v1/orchestrations`;
    let id = '';
    const owed = await raceWith(api, c.id, async () => {
      const made = await call('POST', orch, {
        token,
        body: {
          slug: 'on-ticket',
          name: 'On ticket',
          status: 'active',
          trigger: { type: 'event-driven', eventType: 'record_created', structureSlug: c.recordSlug },
          steps: [{ id: 'pause', type: 'delay', delayMs: 1 }],
        },
      });
      expect(made.status).toBe(201);
      id = made.body.id;
      return made.body.createdAt;
    });
    const runs = await eventually(async () => {
      const listed = (await call('GET', `${orch}/${id}/runs?pageSize=100`, { token })).body.data as {
        input: { recordId: string };
      }[];
      const got = countBy(listed.map((r) => r.input.recordId));
      return owed.every((r) => got.has(r.id)) ? got : undefined;
    }, 60_000);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });

  it('runs an event-driven trigger created while records were being written for every record written after it, each once', async () => {
    const { ws, api, token } = await newWorkspace('route-trig');
    const c = await createCollection(api, 'Orders');
    const base = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
    const fn = await call('POST', `${base}/compute-functions`, {
      token,
      body: {
        name: 'echo',
        code: 'async function run() { return { success: true, data: { recordId: executionParams.recordId } }; }',
      },
    });
    expect(fn.status).toBe(201);
    let id = '';
    const owed = await raceWith(api, c.id, async () => {
      const made = await call('POST', `${base}/function-triggers`, {
        token,
        body: {
          functionId: fn.body.id,
          name: 'on-order',
          executionType: 'event-driven',
          triggerMetadata: { event: 'record_created', recordSlug: c.recordSlug },
        },
      });
      expect(made.status).toBe(201);
      id = made.body.id;
      return made.body.createdAt;
    });
    const runs = await eventually(async () => {
      const listed = (await call('GET', `${base}/function-runs?triggerId=${id}&limit=100`, { token })).body.runs as {
        id: string;
      }[];
      if (listed.length < owed.length) return undefined;
      const details = await Promise.all(
        listed.map(async (r) => (await call('GET', `${base}/function-runs/${r.id}`, { token })).body),
      );
      const got = countBy(details.map((d) => d.result?.data?.recordId as string));
      return owed.every((r) => got.has(r.id)) ? got : undefined;
    }, 90_000);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });

  it('routes nothing of a workspace no consumer is interested in, and its events still reach the records stream', async () => {
    const quiet = await newWorkspace('route-quiet');
    const busy = await newWorkspace('route-busy');
    const hook = await receivers.start();
    const q = await createCollection(quiet.api, 'Things');
    const b = await createCollection(busy.api, 'Things');
    await createSubscription(busy.api, { url: hook.url('/busy'), events: ['record_created'] });

    await createRecord(quiet.api, q.id, { title: 'q1' });
    await createRecord(quiet.api, q.id, { title: 'q2' });
    // Published after the quiet workspace's records by the one relay: once it is delivered, they were relayed.
    const last = await createRecord(busy.api, b.id, { title: 'b1' });
    await eventually(() => (deliveredIds(hook).has(last.id) ? true : undefined), 20_000);

    expect(await counts.records(stack.natsPrefix, recordsOf(quiet.ws))).toBeGreaterThanOrEqual(2);
    expect(await counts.routed(stack.natsPrefix, `${stack.natsPrefix}.routed.*.${quiet.ws}.>`)).toBe(0);
    expect(await counts.routed(stack.natsPrefix, routedTo(busy.ws))).toBeGreaterThanOrEqual(1);
  });

  it.each(['pause', 'delete'] as const)(
    'stops routing a workspace’s events once its only subscription is %sd',
    async (how) => {
      const { ws, api } = await newWorkspace(`route-${how}`);
      const hook = await receivers.start();
      const c = await createCollection(api, 'Things');
      const sub = await createSubscription(api, {
        url: hook.url('/n'),
        events: ['record_created'],
        recordSlugs: [c.recordSlug],
      });
      const first = await createRecord(api, c.id, { title: 'a' });
      await eventually(() => (deliveredIds(hook).has(first.id) ? true : undefined), 20_000);
      const routedBefore = await counts.routed(stack.natsPrefix, routedTo(ws));
      expect(routedBefore).toBeGreaterThanOrEqual(1);

      const res =
        how === 'pause'
          ? await api('PATCH', `/webhook-subscriptions/${sub.id}`, { active: false })
          : await api('DELETE', `/webhook-subscriptions/${sub.id}`);
      expect(res.status).toBeLessThan(300);
      const interests = await db.query('SELECT 1 FROM data.event_interests WHERE workspace_slug = $1', [ws]);
      expect(interests.rowCount).toBe(0);

      const relayedBefore = await counts.records(stack.natsPrefix, recordsOf(ws));
      await createRecord(api, c.id, { title: 'b' });
      await eventually(async () =>
        (await counts.records(stack.natsPrefix, recordsOf(ws))) > relayedBefore ? true : undefined,
      );
      expect(await counts.routed(stack.natsPrefix, routedTo(ws))).toBe(routedBefore);
    },
  );

  it('drains the durable of the whole records stream an earlier version left, handling each event once, then deletes it', async () => {
    const { ws, api } = await newWorkspace('route-legacy');
    const hook = await receivers.start();
    const c = await createCollection(api, 'Things');
    await createSubscription(api, {
      url: hook.url('/legacy'),
      events: ['record_created'],
      recordSlugs: [c.recordSlug],
    });
    const jsm = await jetstreamManager(counts.connection);
    const stream = recordEventsStream(stack.natsPrefix).name;
    const legacy = `${stack.natsPrefix}_webhooks`;

    await stack.stopWebhooks();
    await jsm.consumers.add(stream, {
      durable_name: legacy,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
    });
    // Events only the legacy durable has (published onto the records stream as an old relay did) ...
    const legacyOnly = Array.from({ length: 3 }, () => newUuid());
    await publishAll(
      counts.connection,
      legacyOnly.map((recordId) => ({
        subject: recordEventSubject(stack.natsPrefix, ws, c.recordSlug, 'record_created'),
        msgId: newUuid(),
        payload: JSON.stringify({
          event: 'record_created',
          workspaceSlug: ws,
          recordSlug: c.recordSlug,
          recordId,
          data: { id: recordId, workspaceSlug: ws, recordSlug: c.recordSlug, data: {}, status: 'active', version: 1 },
          timestamp: new Date().toISOString(),
          createdBy: 'someone',
        }),
      })),
    );
    // ... and one on both paths.
    const both = await createRecord(api, c.id, { title: 'both' });
    await eventually(async () => ((await jsm.consumers.info(stream, legacy)).num_pending >= 4 ? true : undefined));

    await stack.restartWebhooks();
    await eventually(async () => {
      const got = deliveredIds(hook);
      return [...legacyOnly, both.id].every((id) => got.has(id)) ? true : undefined;
    }, 30_000);
    await eventually(async () => {
      const left = await jsm.consumers.info(stream, legacy).then(
        () => true,
        () => false,
      );
      return left ? undefined : true;
    }, 30_000);
    expect([...deliveredIds(hook).values()].every((n) => n === 1)).toBe(true);
  });
});
