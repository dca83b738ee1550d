import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { eventually, ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, EventCollector, startStack, type Stack } from '@strata/testkit';

/**
 * Collection migrations (docs/data.md, "Migrations"): a property's type change converts the
 * existing records in batches while clients keep writing, lists what cannot convert, survives
 * a restart of the data service, and can be cancelled.
 */
let stack: Stack;
/** The data service's clock: a completed job's write grace window ends when the test moves it. */
const clock = new ManualClock();
let events: EventCollector;
const ws = `mig-${Date.now().toString(36)}`;
let token: string;

const SETTINGS = {
  DATA_MIGRATION_BATCH_SIZE: '100',
  DATA_MIGRATION_BATCH_PAUSE_MS: '20',
  // Collections of up to 100 records are converted in the change's own transaction.
  DATA_MIGRATION_INLINE_RECORDS: '100',
  // The writers of these tests write far more than a workspace's minute of writes.
  RATE_LIMIT_WRITE_PER_MINUTE: '1000000',
  RATE_LIMIT_READ_PER_MINUTE: '1000000',
  RATE_LIMIT_BULK_PER_MINUTE: '100000',
};

beforeAll(async () => {
  stack = await startStack(SETTINGS, { clocks: { data: clock } });
  token = await adminWorkspaceToken(stack, ws);
  events = await EventCollector.start(stack.natsPrefix, 'migrations');
});

afterAll(async () => {
  await events?.stop();
  await stack?.stop();
});

const api = (method: string, path: string, body?: unknown) =>
  call(method, `${stack.baseUrl}/data/workspace/${ws}/api/v1${path}`, {
    token,
    ...(body !== undefined ? { body } : {}),
  });

async function ok(method: string, path: string, body?: unknown, status = 200): Promise<any> {
  const res = await api(method, path, body);
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates `count` records from `make(i)` in bulk requests; returns their ids in order. */
async function seed(
  structureId: string,
  count: number,
  make: (i: number) => Record<string, unknown>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 1000) {
    const records = Array.from({ length: Math.min(1000, count - start) }, (_, k) => ({ data: make(start + k) }));
    const done = await ok('POST', '/records/bulk', { structureId, records, options: { returnRecords: true } });
    expect(done.failed).toBe(0);
    ids.push(...done.records.map((r: { id: string }) => r.id));
  }
  return ids;
}

/** Every live record of a collection, by id (keyset pages). */
async function allRecords(structureId: string): Promise<Map<string, any>> {
  const found = new Map<string, any>();
  let cursor: string | undefined;
  for (;;) {
    const page = await ok(
      'GET',
      `/records?structureId=${structureId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    for (const r of page.results) found.set(r.id, r);
    if (!page.pagination.nextCursor) return found;
    cursor = page.pagination.nextCursor;
  }
}

const finished = (structureId: string, jobId: string, timeoutMs = 120_000) =>
  eventually(
    async () => {
      const job = await ok('GET', `/structures/${structureId}/migrations/${jobId}`);
      return job.finishedAt ? job : undefined;
    },
    timeoutMs,
    200,
  );

describe('collection migrations', () => {
  it('converts every record while 8 clients keep writing: no write refused, none lost, the rest listed', async () => {
    const c = await ok('POST', '/structures', {
      name: 'Readings',
      properties: [
        { name: 'amount', type: 'string' },
        { name: 'seq', type: 'number' },
      ],
    });
    const N = 3000;
    const bad = (i: number) => i % 200 === 0;
    const seeded = await seed(c.id, N, (i) => ({ amount: bad(i) ? 'n/a' : String(i + 0.5), seq: 0 }));
    const badIds = new Set(seeded.filter((_, i) => bad(i)));

    // A client holding one record in a long transaction (here, straight in the database): the
    // job passes it by (SKIP LOCKED), checks it again after the scan, and cannot end before it
    // is released. The writers stop before that, so every write they make meets a running job.
    const held = seeded[1]!;
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM data.records WHERE id = $1 FOR UPDATE', [held]);

    let stop = false;
    const refused: string[] = [];
    const created = new Map<string, number>();
    const lastSeq = new Map<string, number>();
    // Each writer patches its own slice of the seeded records (so the last value written is
    // known) and creates records the way a client written for the old definition does (amount
    // a string), before the change and during the migration.
    const writer = async (w: number) => {
      const mine = seeded.filter((id, i) => i % 8 === w && !badIds.has(id) && id !== held);
      for (let k = 0; !stop || k < 20; k++) {
        const id = mine[(k * 37) % mine.length]!;
        const patched = await api('PATCH', `/records/${id}`, { data: { seq: k + 1 } });
        if (patched.status !== 200) refused.push(`PATCH ${patched.status} ${JSON.stringify(patched.body)}`);
        else lastSeq.set(id, k + 1);
        const amount = w * 1000 + k + 0.25;
        const createdNow = await api('POST', '/records', {
          structureId: c.id,
          data: { amount: String(amount), seq: -1 },
        });
        if (createdNow.status !== 201) refused.push(`POST ${createdNow.status} ${JSON.stringify(createdNow.body)}`);
        else created.set(createdNow.body.id, amount);
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));

    const changed = await ok('PUT', `/structures/${c.id}`, {
      properties: [
        { name: 'amount', type: 'number' },
        { name: 'seq', type: 'number' },
      ],
    });
    expect(changed.metadata).toMatchObject({
      migrationInProgress: true,
      recordWritesLocked: false,
      structureWritesLocked: true,
    });
    const jobId: string = changed.metadata.migrationJobId;
    expect(jobId).toEqual(expect.any(String));

    // One migration at a time: another property change is refused while it runs.
    const second = await api('PUT', `/structures/${c.id}`, { properties: [{ name: 'amount', type: 'string' }] });
    expect(second.status).toBe(409);
    // A change that leaves the properties alone goes through, the same properties sent again too.
    await ok('PUT', `/structures/${c.id}`, { description: 'during the migration' });
    await ok('PUT', `/structures/${c.id}`, {
      properties: [
        { name: 'amount', type: 'number' },
        { name: 'seq', type: 'number' },
      ],
    });
    expect((await api('DELETE', `/structures/${c.id}`)).status).toBe(409);
    // The new definition applies to writes at once: what does not convert is refused.
    const garbage = await api('POST', '/records', { structureId: c.id, data: { amount: 'lots' } });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error.details).toEqual([{ field: 'data.amount', message: 'must be a number' }]);

    const running = await ok('GET', `/structures/${c.id}/migrations/${jobId}`);
    expect(running).toMatchObject({ id: jobId, structureId: c.id, changes: [{ property: 'amount' }] });
    expect(running.progress.total).toBeGreaterThanOrEqual(N);

    const scanned = await eventually(
      async () => {
        const j = await ok('GET', `/structures/${c.id}/migrations/${jobId}`);
        return j.phase === 'recheck' ? j : undefined;
      },
      120_000,
      100,
    );
    expect(scanned.status).toBe('running');
    stop = true;
    await Promise.all(writers);
    const waiting = await ok('GET', `/structures/${c.id}/migrations/${jobId}`);
    expect(waiting).toMatchObject({ status: 'running', phase: 'recheck', progress: { pending: 1 } });
    await holder.query('COMMIT');
    await holder.end();
    const job = await finished(c.id, jobId);

    expect(refused).toEqual([]);
    expect(job.status).toBe('completed');
    expect(job.progress.failed).toBe(badIds.size);
    expect(job.progress.pending).toBe(0);
    expect(job.progress.processed).toBeGreaterThanOrEqual(N);
    expect(job.failuresTotal).toBe(badIds.size);
    expect(new Set(job.failures.map((f: { recordId: string }) => f.recordId))).toEqual(badIds);
    expect(job.failures[0]).toMatchObject({
      phase: 'migrate',
      fields: [{ field: 'amount', reason: expect.stringContaining('not a number') }],
    });
    const listed = await ok('GET', `/structures/${c.id}/migrations/${jobId}/failures?limit=5&offset=10`);
    expect(listed.pagination).toMatchObject({ limit: 5, offset: 10, total: badIds.size, hasMore: false });

    const after = await ok('GET', `/structures/${c.id}`);
    expect(after.metadata).toEqual({
      recordWritesLocked: false,
      structureWritesLocked: false,
      migrationInProgress: false,
      lastMigrationId: jobId,
    });
    const listedJobs = await ok('GET', `/collections/${c.id}/migrations`);
    expect(listedJobs.results.map((j: { id: string }) => j.id)).toEqual([jobId]);

    // Every record is there: converted, or listed with its value untouched; no update lost.
    const records = await allRecords(c.id);
    expect(records.size).toBe(N + created.size);
    seeded.forEach((id, i) => {
      const r = records.get(id);
      expect(r).toBeDefined();
      if (bad(i)) expect(r.data.amount).toBe('n/a');
      else expect(r.data.amount).toBe(i + 0.5);
      expect(r.data.seq).toBe(lastSeq.get(id) ?? 0);
    });
    // Created before the change (converted by the job) or during it (converted on the way in).
    for (const [id, amount] of created) expect(records.get(id).data.amount).toBe(amount);

    // The migration told its progress on the collection's event subject.
    const mine = (name: string) => (e: { payload: any }) => e.payload.event === name && e.payload.migrationId === jobId;
    await events.waitFor(mine('collection_migration_started'));
    await events.waitFor(mine('collection_migration_progress'));
    const [done] = await events.waitFor(mine('collection_migration_finished'));
    expect(done!.subject).toBe(`${stack.natsPrefix}.records.${ws}.${c.recordSlug}.collection_migration_finished`);
    expect(done!.payload).toMatchObject({ status: 'completed', structureId: c.id, progress: { failed: badIds.size } });
  }, 300_000);

  it('checks a change to a reference: values naming no record of the target are listed', async () => {
    const people = await ok('POST', '/structures', { name: 'People', properties: [{ name: 'name', type: 'string' }] });
    const alice = (await seed(people.id, 1, () => ({ name: 'alice' })))[0]!;
    const tasks = await ok('POST', '/structures', { name: 'Tasks', properties: [{ name: 'owner', type: 'string' }] });
    const stranger = '00000000-0000-4000-8000-000000000000';
    const [good, dangling, garbage] = (await seed(tasks.id, 3, (i) => ({ owner: [alice, stranger, 'bob'][i] }))) as [
      string,
      string,
      string,
    ];
    const changed = await ok('PUT', `/structures/${tasks.id}`, {
      properties: [
        { name: 'owner', type: 'reference', target: 'people', relationship: 'many-to-one', onDelete: 'restrict' },
      ],
    });
    // A small collection is converted in the change's own transaction: the answer has it done.
    expect(changed.metadata).toEqual({
      recordWritesLocked: false,
      structureWritesLocked: false,
      migrationInProgress: false,
      lastMigrationId: expect.any(String),
    });
    const job = await ok('GET', `/structures/${tasks.id}/migrations/${changed.metadata.lastMigrationId}`);
    expect(job).toMatchObject({ status: 'completed', progress: { total: 3, failed: 2, alreadyValid: 1 } });
    const reasons = Object.fromEntries(job.failures.map((f: any) => [f.recordId, f.fields[0].reason]));
    expect(Object.keys(reasons).sort()).toEqual([dangling, garbage].sort());
    expect(reasons[dangling]).toMatch(/names no record of people/);
    expect(reasons[garbage]).toMatch(/names no record of people|UUID/);
    expect((await ok('GET', `/records/${good}`)).data.owner).toBe(alice);
    // A finished job cannot be cancelled; another collection's path does not reach it.
    const jobPath = `/structures/${tasks.id}/migrations/${job.id}`;
    expect((await api('POST', `${jobPath}/cancel`)).status).toBe(409);
    expect((await api('GET', `/structures/${people.id}/migrations/${job.id}`)).status).toBe(404);
    expect((await api('GET', `/structures/${tasks.id}/migrations/not-a-uuid`)).status).toBe(400);
    // The valid reference now holds: the target cannot be deleted under onDelete: restrict.
    expect((await api('DELETE', `/records/${alice}`)).status).toBe(409);
  }, 120_000);

  it('checks a new property over values records already hold: converted, duplicates and non-numbers listed', async () => {
    const c = await ok('POST', '/structures', {
      name: 'Loose codes',
      schemaDiscoveryMode: 'auto-evolving',
      properties: [{ name: 'label', type: 'string' }],
    });
    const codes: unknown[] = ['1', 2, 2, 'n/a', 3, undefined];
    const ids = await seed(c.id, codes.length, (i) =>
      codes[i] === undefined ? { label: 'none' } : { code: codes[i] },
    );
    const change = {
      properties: [
        { name: 'label', type: 'string' },
        { name: 'code', type: 'number', isUnique: true },
      ],
    };
    // The dry run says so too.
    expect((await ok('POST', `/structures/${c.id}/validate`, change)).migration).toEqual({
      required: true,
      properties: ['code'],
    });
    const changed = await ok('PUT', `/structures/${c.id}`, change);
    expect(changed.metadata).toMatchObject({ migrationInProgress: false, lastMigrationId: expect.any(String) });
    const job = await ok('GET', `/structures/${c.id}/migrations/${changed.metadata.lastMigrationId}`);
    expect(job).toMatchObject({
      status: 'completed',
      changes: [{ property: 'code', from: null, to: { name: 'code', type: 'number', isUnique: true } }],
      progress: { total: 6, converted: 1, alreadyValid: 3, failed: 2 },
    });
    const reasons = Object.fromEntries(job.failures.map((f: any) => [f.recordId, f.fields[0].reason]));
    expect(reasons[ids[3]!]).toMatch(/is not a number/);
    const duplicate = [ids[1]!, ids[2]!].filter((id) => reasons[id] !== undefined);
    expect(duplicate).toHaveLength(1);
    expect(reasons[duplicate[0]!]).toMatch(/another record holds/);
    // Converted where it could be; listed values are kept as they were.
    expect((await ok('GET', `/records/${ids[0]}`)).data.code).toBe(1);
    expect((await ok('GET', `/records/${ids[3]}`)).data.code).toBe('n/a');
    // The values are in the unique index now, the converted one included.
    for (const code of [1, 2, 3]) {
      const refused = await api('POST', '/records', { structureId: c.id, data: { code } });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'DUPLICATE_KEY', details: [{ field: 'data.code' }] });
    }
    expect((await api('POST', '/records', { structureId: c.id, data: { code: 4 } })).status).toBe(201);

    // A collection whose records hold no value under the new name starts no job.
    const d = await ok('POST', '/structures', {
      name: 'Loose labels',
      schemaDiscoveryMode: 'auto-evolving',
      properties: [{ name: 'label', type: 'string' }],
    });
    await seed(d.id, 3, () => ({ label: 'x', other: 1 }));
    expect((await ok('POST', `/structures/${d.id}/validate`, change)).migration).toEqual({
      required: false,
      properties: [],
    });
    const fast = await ok('PUT', `/structures/${d.id}`, change);
    expect(fast.metadata.lastMigrationId).toBeUndefined();
    expect((await ok('GET', `/structures/${d.id}/migrations`)).results).toEqual([]);
  }, 120_000);

  it('applies the new definition to writes on every replica at once', async () => {
    const replica = await stack.startDataReplica();
    try {
      const url = (await replica.getUrl()).replace('[::1]', '127.0.0.1');
      const viaReplica = (body: unknown) => call('POST', `${url}/data/workspace/${ws}/api/v1/records`, { token, body });
      const c = await ok('POST', '/structures', { name: 'Codes', properties: [{ name: 'code', type: 'string' }] });
      await seed(c.id, 50, (i) => ({ code: String(i) }));
      // The replica reads the collection once and caches it.
      expect((await viaReplica({ structureId: c.id, data: { code: 'x1' } })).status).toBe(201);
      const changed = await ok('PUT', `/structures/${c.id}`, { properties: [{ name: 'code', type: 'number' }] });
      const refused = await viaReplica({ structureId: c.id, data: { code: 'abc' } });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([{ field: 'data.code', message: 'must be a number' }]);
      expect((await viaReplica({ structureId: c.id, data: { code: 5 } })).status).toBe(201);
      const job = await finished(c.id, changed.metadata.lastMigrationId);
      // The record written under the old definition that does not convert is listed.
      expect(job.progress).toMatchObject({ total: 51, failed: 1 });
    } finally {
      await replica.close();
    }
  }, 120_000);

  it('survives a restart of the data service: the next instance goes on where the batches stopped', async () => {
    await stack.restartData({ ...SETTINGS, DATA_MIGRATION_BATCH_PAUSE_MS: '150' });
    const c = await ok('POST', '/structures', { name: 'Counters', properties: [{ name: 'n', type: 'number' }] });
    const N = 1500;
    const seeded = await seed(c.id, N, (i) => ({ n: i }));
    const changed = await ok('PUT', `/structures/${c.id}`, { properties: [{ name: 'n', type: 'string' }] });
    const jobId = changed.metadata.migrationJobId;
    await eventually(
      async () =>
        (await ok('GET', `/structures/${c.id}/migrations/${jobId}`)).progress.processed >= 200 ? true : undefined,
      60_000,
      50,
    );
    await stack.restartData({ ...SETTINGS, DATA_MIGRATION_BATCH_PAUSE_MS: '0' });
    const job = await finished(c.id, jobId);
    // Each record counted once: a batch is its records' rewrite and the job's counters in one transaction.
    expect(job).toMatchObject({ status: 'completed', progress: { total: N, processed: N, converted: N, failed: 0 } });
    const records = await allRecords(c.id);
    seeded.forEach((id, i) => expect(records.get(id).data.n).toBe(String(i)));
  }, 180_000);

  it('cancel puts the old definition back and the records with it', async () => {
    await stack.restartData({ ...SETTINGS, DATA_MIGRATION_BATCH_PAUSE_MS: '300' });
    const c = await ok('POST', '/structures', {
      name: 'Scores',
      properties: [
        { name: 'score', type: 'string' },
        { name: 'note', type: 'string' },
      ],
    });
    const N = 1000;
    const seeded = await seed(c.id, N, (i) => ({ score: i % 2 ? `${i}` : ` ${i}.0 `, note: 'x' }));
    const changed = await ok('PUT', `/structures/${c.id}`, {
      properties: [
        { name: 'score', type: 'number' },
        { name: 'note', type: 'string' },
      ],
    });
    const jobId = changed.metadata.migrationJobId;
    // Written under the new definition while it runs.
    const during = await ok('POST', '/records', { structureId: c.id, data: { score: 7.25, note: 'new' } }, 201);
    // A record the job has not reached yet, patched on another field: stored converted.
    const last = seeded[seeded.length - 1]!;
    await ok('PATCH', `/records/${last}`, { data: { note: 'patched' } });
    await eventually(
      async () =>
        (await ok('GET', `/structures/${c.id}/migrations/${jobId}`)).progress.converted > 0 ? true : undefined,
      60_000,
      50,
    );
    const cancelled = await ok('POST', `/structures/${c.id}/migrations/${jobId}/cancel`);
    expect(cancelled.status).toBe('cancelling');
    const back = await ok('GET', `/structures/${c.id}`);
    expect(back.properties.find((p: { name: string }) => p.name === 'score').type).toBe('string');
    expect(back.metadata).toMatchObject({ migrationInProgress: true, migrationJobId: jobId });
    // New writes follow the old definition at once: a value of the new type is converted back on the way in.
    expect((await ok('POST', '/records', { structureId: c.id, data: { score: 3 } }, 201)).data.score).toBe('3');
    expect((await api('POST', '/records', { structureId: c.id, data: { score: { n: 3 } } })).status).toBe(400);
    // A second cancel is a conflict.
    expect((await api('POST', `/structures/${c.id}/migrations/${jobId}/cancel`)).status).toBe(409);

    await stack.restartData({ ...SETTINGS, DATA_MIGRATION_BATCH_PAUSE_MS: '0' });
    const job = await finished(c.id, jobId);
    expect(job).toMatchObject({ status: 'cancelled', percent: 100, progress: { revertFailed: 0 } });
    expect(job.progress.revertProcessed).toBeGreaterThanOrEqual(N);
    expect(job.progress.reverted).toBeGreaterThan(0);
    const records = await allRecords(c.id);
    seeded.forEach((id, i) => {
      // The job's own rewrites are put back exactly (" 4.0 " again, not "4").
      expect(records.get(id).data.score).toBe(i % 2 ? `${i}` : ` ${i}.0 `);
    });
    expect(records.get(last).data.note).toBe('patched');
    expect(records.get(during.id).data.score).toBe('7.25');
    expect((await ok('GET', `/structures/${c.id}`)).metadata).toEqual({
      recordWritesLocked: false,
      structureWritesLocked: false,
      migrationInProgress: false,
      lastMigrationId: jobId,
    });
  }, 180_000);
});

/** Holds a record locked (a client's long transaction, here straight in the database); `release` commits. */
async function hold(recordId: string): Promise<{ release: () => Promise<void> }> {
  const holder = new pg.Client({ connectionString: stack.databaseUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT id FROM data.records WHERE id = $1 FOR UPDATE', [recordId]);
  return {
    release: async () => {
      await holder.query('COMMIT');
      await holder.end();
    },
  };
}

describe('collection operations during and after a migration', () => {
  it('refuses a bulk delete and a property removal of a migrating collection, naming the job, touching nothing', async () => {
    const c = await ok('POST', '/structures', {
      name: 'Busy',
      properties: [
        { name: 'amount', type: 'string' },
        { name: 'note', type: 'string' },
        { name: 'spare', type: 'string' },
      ],
    });
    const idle = await ok('POST', '/structures', { name: 'Idle', properties: [] });
    const ids = await seed(c.id, 5, (i) => ({ amount: String(i), note: `n${i}` }));
    // A record a client holds: the change's own scan passes it by, so the job goes on in the background until it is let go.
    const held = await hold(ids[0]!);
    let jobId: string | undefined;
    try {
      const changed = await ok('PUT', `/structures/${c.id}`, {
        properties: [
          { name: 'amount', type: 'number' },
          { name: 'note', type: 'string' },
          { name: 'spare', type: 'string' },
        ],
      });
      expect(changed.metadata).toMatchObject({ migrationInProgress: true });
      const running: string = changed.metadata.migrationJobId;
      jobId = running;

      // Bulk delete: the migrating collection is refused for itself (as a single DELETE is), the others go.
      const bulk = await api('DELETE', '/structures/bulk', { ids: [c.id, idle.id] });
      expect(bulk.status).toBe(200);
      expect(bulk.body).toMatchObject({
        success: false,
        failed: 1,
        deleted: [{ id: idle.id, recordSlug: idle.recordSlug }],
      });
      expect(bulk.body.errors).toEqual([
        { field: 'ids[0]', error: { code: 'CONFLICT', message: expect.stringContaining(running) } },
      ]);
      expect((await api('GET', `/structures/${c.id}`)).status).toBe(200);

      // Property removal, forced or not, held values or none: a 409 naming the job, before any value goes.
      for (const body of [{ names: ['note'], force: true }, { names: ['note'] }, { names: ['spare'] }]) {
        const removal = await api('DELETE', `/structures/${c.id}/properties`, body);
        expect(removal.status).toBe(409);
        expect(removal.body.error.code).toBe('CONFLICT');
        expect(removal.body.error.message).toContain(`migration ${running}`);
      }
      const after = await ok('GET', `/structures/${c.id}`);
      expect(after.properties.map((p: { name: string }) => p.name)).toEqual(['amount', 'note', 'spare']);
      expect((await ok('GET', `/structures/${c.id}/migrations/${running}`)).status).toBe('running');
    } finally {
      await held.release();
    }
    const job = await finished(c.id, jobId ?? 'the job');
    expect(job.status).toBe('completed');
    const records = await allRecords(c.id);
    ids.forEach((id, i) => expect(records.get(id).data).toEqual({ amount: i, note: `n${i}` }));
  }, 120_000);

  it('converts old-type values on write for DATA_MIGRATION_WRITE_GRACE_MS after the job, until a later change', async () => {
    const c = await ok('POST', '/structures', { name: 'Graceful', properties: [{ name: 'amount', type: 'string' }] });
    await seed(c.id, 3, (i) => ({ amount: `${i}.5` }));
    const changed = await ok('PUT', `/structures/${c.id}`, { properties: [{ name: 'amount', type: 'number' }] });
    // A small collection: the job is done when the PUT answers.
    expect(changed.metadata).toMatchObject({ migrationInProgress: false, lastMigrationId: expect.any(String) });
    expect((await ok('GET', `/structures/${c.id}/migrations/${changed.metadata.lastMigrationId}`)).status).toBe(
      'completed',
    );

    // A client still sending the old type: converted and accepted, on create and on update.
    const created = await ok('POST', '/records', { structureId: c.id, data: { amount: ' 12.5 ' } }, 201);
    expect(created.data.amount).toBe(12.5);
    const patched = await ok('PATCH', `/records/${created.id}`, { data: { amount: '7' } });
    expect(patched.data.amount).toBe(7);
    // What does not convert is refused as ever.
    expect((await api('POST', '/records', { structureId: c.id, data: { amount: 'lots' } })).status).toBe(400);

    // Just inside the window (1 hour by default), then past it: the usual 400.
    clock.advance(3_600_000 - 1);
    expect((await ok('POST', '/records', { structureId: c.id, data: { amount: '1' } }, 201)).data.amount).toBe(1);
    clock.advance(1);
    const late = await api('POST', '/records', { structureId: c.id, data: { amount: '1' } });
    expect(late.status).toBe(400);
    expect(late.body.error.details).toEqual([{ field: 'data.amount', message: 'must be a number' }]);

    // A later change of the properties ends the window at once.
    const d = await ok('POST', '/structures', { name: 'Regraded', properties: [{ name: 'grade', type: 'string' }] });
    await seed(d.id, 2, () => ({ grade: '3' }));
    await ok('PUT', `/structures/${d.id}`, { properties: [{ name: 'grade', type: 'number' }] });
    expect((await ok('POST', '/records', { structureId: d.id, data: { grade: '4' } }, 201)).data.grade).toBe(4);
    // A change of other fields is no definition change for it.
    await ok('PUT', `/structures/${d.id}`, { description: 'graded' });
    expect((await ok('POST', '/records', { structureId: d.id, data: { grade: '5' } }, 201)).data.grade).toBe(5);
    await ok('PUT', `/structures/${d.id}`, {
      properties: [
        { name: 'grade', type: 'number' },
        { name: 'comment', type: 'string' },
      ],
    });
    const refused = await api('POST', '/records', { structureId: d.id, data: { grade: '6' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ field: 'data.grade', message: 'must be a number' }]);
  }, 120_000);
});
