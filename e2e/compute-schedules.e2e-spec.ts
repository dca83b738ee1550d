import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/** The compute service's clock: due times are read on it, so the test moves time instead of waiting. */
const clock = new ManualClock(Date.parse('2026-06-01T10:00:00.000Z'));
let stack: Stack;
let replica: Awaited<ReturnType<Stack['startComputeReplica']>>;
const ws = `sched-${Date.now().toString(36)}`;
let token: string;
let functionId: string;

const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;

beforeAll(async () => {
  // Two API replicas fire schedules; every occurrence must run once.
  stack = await startStack({ COMPUTE_SCHEDULER_INTERVAL_MS: '50' }, { clocks: { compute: clock } });
  replica = await stack.startComputeReplica();
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  token = await adminWorkspaceToken(stack, ws);
  const fn = await call('POST', `${base()}/compute-functions`, {
    token,
    body: { name: 'tick', code: 'async function run() { return { success: true, data: executionParams }; }' },
  });
  functionId = fn.body.id;
});

afterAll(async () => {
  await replica?.close();
  await stack?.stop();
});

const runsOf = async (triggerId: string) =>
  (await call('GET', `${base()}/function-runs?triggerId=${triggerId}&limit=100`, { token })).body.runs as {
    id: string;
    status: string;
    executionSource: string;
  }[];

/** The trigger's next due time in the scheduler's table (ms), or null when it is off the list. */
async function dueOf(triggerId: string): Promise<number | null> {
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query('SELECT due_at FROM compute.trigger_schedules WHERE trigger_id = $1', [triggerId]);
    return rows[0] ? (rows[0].due_at as Date).getTime() : null;
  } finally {
    await db.end();
  }
}

/**
 * Waits (polling, with a deadline) until the schedulers have dealt with every occurrence
 * due by the clock's now (the trigger's row is due later, or gone: the run of an occurrence
 * commits with the row's move), then checks the trigger has exactly `count` runs.
 */
async function expectRuns(triggerId: string, count: number): Promise<{ id: string; executionSource: string }[]> {
  const until = Date.now() + 30_000;
  for (;;) {
    const due = await dueOf(triggerId);
    const runs = await runsOf(triggerId);
    if (due === null || due > clock.now().getTime()) {
      expect(runs).toHaveLength(count);
      return runs;
    }
    if (Date.now() > until) throw new Error(`trigger ${triggerId}: due ${new Date(due).toISOString()} not fired`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const scheduled = (name: string, triggerMetadata: Record<string, unknown>) =>
  call('POST', `${base()}/function-triggers`, {
    token,
    body: { name, functionId, executionType: 'scheduled', triggerMetadata },
  });

describe('the scheduler', () => {
  it('fires an interval trigger once per occurrence across two replicas, skips what downtime missed, and stops when paused', async () => {
    const trigger = await scheduled('every-minute', { interval: 60 });
    expect(trigger.status).toBe(201);
    const id = trigger.body.id as string;
    await expectRuns(id, 0);

    clock.advance(60_000);
    const [first] = await expectRuns(id, 1);
    expect(first!.executionSource).toBe('scheduled');
    // The run is queued with the schedule's move; its result comes once a worker has run it.
    const until = Date.now() + 30_000;
    let detail = await call('GET', `${base()}/function-runs/${first!.id}`, { token });
    while (['queued', 'running'].includes(detail.body.status)) {
      if (Date.now() > until) throw new Error(`run ${first!.id} not finished`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      detail = await call('GET', `${base()}/function-runs/${first!.id}`, { token });
    }
    expect(detail.body.result.data).toEqual({ scheduledFor: '2026-06-01T10:01:00.000Z', firedAt: expect.any(String) });

    // Ten minutes pass at once (downtime): one run, not ten; the next is back on the minute.
    clock.advance(10 * 60_000 + 30_000);
    await expectRuns(id, 2);
    clock.advance(30_000);
    await expectRuns(id, 3);

    expect((await call('PATCH', `${base()}/function-triggers/${id}/pause`, { token })).status).toBe(200);
    clock.advance(5 * 60_000);
    await expectRuns(id, 3);
    expect((await call('PATCH', `${base()}/function-triggers/${id}/resume`, { token })).status).toBe(200);
    clock.advance(60_000);
    await expectRuns(id, 4);

    // A restart loses nothing: the due time is in Postgres.
    await stack.restartCompute({ COMPUTE_SCHEDULER_INTERVAL_MS: '50' });
    clock.advance(60_000);
    await expectRuns(id, 5);

    expect((await call('DELETE', `${base()}/function-triggers/${id}`, { token })).status).toBe(200);
    clock.advance(5 * 60_000);
    await expectRuns(id, 5);
  });

  it('fires a once trigger at its time and never again, and a cron trigger on its expression', async () => {
    const at = new Date(clock.now().getTime() + 90_000).toISOString();
    const once = await scheduled('just-once', { scheduleType: 'once', scheduledAt: at });
    expect(once.status).toBe(201);
    const cron = await scheduled('on-the-hour', { scheduleType: 'cron', cronExpression: '0 * * * *' });
    expect(cron.status).toBe(201);
    clock.advance(60_000);
    await expectRuns(once.body.id, 0);
    clock.advance(30_000);
    await expectRuns(once.body.id, 1);
    clock.advance(3 * 3_600_000);
    await expectRuns(once.body.id, 1);
    // Three hours crossed three hours' tops at once: one run for the missed ones.
    await expectRuns(cron.body.id, 1);
    clock.advance(3_600_000);
    await expectRuns(cron.body.id, 2);
  });

  it('keeps the next due time when an update leaves the schedule alone', async () => {
    const trigger = await scheduled('kept-time', { interval: 600, params: { v: 1 } });
    const due = await dueOf(trigger.body.id);
    expect(due).toEqual(expect.any(Number));
    clock.advance(120_000);
    // Before, any metadata update restarted the interval from the update.
    const updated = await call('PUT', `${base()}/function-triggers/${trigger.body.id}`, {
      token,
      body: { description: 'described', triggerMetadata: { interval: 600, params: { v: 2 } } },
    });
    expect(updated.status).toBe(200);
    expect(await dueOf(trigger.body.id)).toBe(due);
  });

  it('reschedules at once when the schedule is updated', async () => {
    const trigger = await scheduled('rescheduled', { interval: 3600 });
    clock.advance(120_000);
    await expectRuns(trigger.body.id, 0);
    const updated = await call('PUT', `${base()}/function-triggers/${trigger.body.id}`, {
      token,
      body: { triggerMetadata: { interval: 60 } },
    });
    expect(updated.status).toBe(200);
    clock.advance(60_000);
    await expectRuns(trigger.body.id, 1);
  });
});

describe('documents kept with api.storeAsJSON, on the same clock', () => {
  it('are read back until they expire, then are gone', async () => {
    const queued = await call('POST', `${base()}/compute-functions/test`, {
      token,
      body: {
        code: 'async function run() { return { success: true, data: await api.storeAsJSON("kept", { n: 1 }) }; }',
        params: {},
      },
    });
    let run: Record<string, any> | undefined;
    const until = Date.now() + 30_000;
    while (!run || ['queued', 'running'].includes(run.status)) {
      if (Date.now() > until) throw new Error('the run did not finish');
      await new Promise((resolve) => setTimeout(resolve, 50));
      run = (await call('GET', `${base()}/function-runs?jobId=${queued.body.jobId}`, { token })).body.runs[0];
    }
    const documents = `${base()}/function-runs/${run.id}/documents`;
    const [doc] = (await call('GET', documents, { token })).body.documents;
    expect(doc).toMatchObject({ name: 'kept' });
    // The worker stamped the document on its own (system) clock, seven days ahead
    // (COMPUTE_DOCUMENT_TTL_HOURS): a minute before that instant, on the API's clock, it is still there.
    expect(Date.parse(doc.expiresAt) - Date.parse(doc.createdAt)).toBe(7 * 24 * 3_600_000);
    clock.advance(Date.parse(doc.expiresAt) - clock.now().getTime() - 60_000);
    expect((await call('GET', `${documents}/${doc.id}`, { token })).body.content).toEqual({ n: 1 });
    clock.advance(120_000);
    expect((await call('GET', documents, { token })).body.documents).toEqual([]);
    expect((await call('GET', `${documents}/${doc.id}`, { token })).status).toBe(404);
  });
});
