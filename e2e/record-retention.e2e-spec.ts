import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually, ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
/** The data service's clock: versions age when the test moves it, not when real time does. */
const clock = new ManualClock();
const ws = `keep-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  stack = await startStack({ DATA_RETENTION_SWEEP_INTERVAL_MS: '100' }, { clocks: { data: clock } });
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

/** A versioned collection and one record of it, changed until it has `versions` versions. */
async function recordWithVersions(name: string, versions: number, retentionPolicy?: object): Promise<string> {
  const c = await api('POST', '/structures', {
    name,
    enableVersioning: true,
    properties: [{ name: 'n', type: 'number' }],
    ...(retentionPolicy ? { retentionPolicy } : {}),
  });
  expect(c.status).toBe(200);
  const r = await api('POST', '/records', { structureId: c.body.id, data: { n: 1 } });
  expect(r.status).toBe(201);
  for (let n = 2; n <= versions; n++) {
    expect((await api('PATCH', `/records/${r.body.id}`, { data: { n } })).status).toBe(200);
  }
  return r.body.id as string;
}

const versionsOf = async (id: string): Promise<number[]> => {
  const history = await api('GET', `/records/${id}/history`);
  expect(history.status).toBe(200);
  return (history.body.versions as { version: number }[]).map((v) => v.version).sort((a, b) => a - b);
};

/** Polls the history until it is `expected` (the sweep runs every 100 ms of real time). */
async function prunedTo(id: string, expected: number[]): Promise<void> {
  let seen: number[] = [];
  await eventually(async () => {
    seen = await versionsOf(id);
    return JSON.stringify(seen) === JSON.stringify(expected) ? true : undefined;
  }, 30_000).catch(() => undefined);
  expect(seen).toEqual(expected);
}

describe('retention policies', () => {
  it('keeps the newest maxVersions versions of each record; a collection without a policy keeps all', async () => {
    const unbounded = await recordWithVersions('Unbounded', 5);
    const bounded = await recordWithVersions('Bounded', 5, { maxVersions: 2 });
    await prunedTo(bounded, [4, 5]);
    expect(await versionsOf(unbounded)).toEqual([1, 2, 3, 4, 5]);

    // The record itself is untouched, and an older version that went cannot be restored.
    expect((await api('GET', `/records/${bounded}`)).body).toMatchObject({ version: 5, data: { n: 5 } });
    expect((await api('POST', `/records/${bounded}/restore`, { version: 1 })).status).toBe(404);
    const restored = await api('POST', `/records/${bounded}/restore`, { version: 4 });
    expect(restored.body).toMatchObject({ version: 6, restoredFrom: 4, data: { n: 4 } });
    await prunedTo(bounded, [5, 6]);
  });

  it('keeps the newest maxVersions stored versions where the numbering has gaps', async () => {
    // Not versioned: a version is kept only by a PATCH with createVersion, so the stored ones are 2, 4 and 8.
    const c = await api('POST', '/structures', {
      name: 'Sparse',
      properties: [{ name: 'n', type: 'number' }],
      retentionPolicy: { maxVersions: 2 },
    });
    const r = await api('POST', '/records', { structureId: c.body.id, data: { n: 1 } });
    for (let n = 2; n <= 8; n++) {
      const keep = n === 2 || n === 4 || n === 8;
      const patched = await api('PATCH', `/records/${r.body.id}`, {
        data: { n },
        ...(keep ? { options: { createVersion: true } } : {}),
      });
      expect(patched.body.version).toBe(n);
    }
    await prunedTo(r.body.id, [4, 8]);
  });

  it('drops versions older than maxAgeDays by the service clock, never the current one', async () => {
    const aging = await recordWithVersions('Aging', 3, { maxAgeDays: 1 });
    const lasting = await recordWithVersions('Lasting', 3, { maxAgeDays: 3 });
    expect(await versionsOf(aging)).toEqual([1, 2, 3]);

    clock.advance(2 * 86_400_000);
    await prunedTo(aging, [3]);
    expect(await versionsOf(lasting)).toEqual([1, 2, 3]);
  });

  it('applies a policy set later by an update of the collection', async () => {
    const id = await recordWithVersions('Later', 4);
    const record = await api('GET', `/records/${id}`);
    const collection = await api('GET', `/structures/${record.body.structureId}`);
    const updated = await api('PUT', `/structures/${collection.body.id}`, {
      name: 'Later',
      enableVersioning: true,
      properties: collection.body.properties,
      retentionPolicy: { maxVersions: 1 },
    });
    expect(updated.body).toMatchObject({ retentionPolicy: { maxVersions: 1 } });
    await prunedTo(id, [4]);
  });
});

// Last in the file: these move the data service's clock on by months.
describe('retention of deleted records and of the changelog', () => {
  const DAY_MS = 86_400_000;

  it('a deleted record is restorable for DATA_DELETED_RECORD_RETENTION_DAYS, then gone for good', async () => {
    const c = await api('POST', '/structures', {
      name: 'Bin',
      enableVersioning: true,
      properties: [{ name: 'n', type: 'number' }],
    });
    const [back, gone] = await Promise.all(
      [1, 2].map(
        async (n) => (await api('POST', '/records', { structureId: c.body.id, data: { n } })).body.id as string,
      ),
    );
    let deletedAt = 0;
    for (const id of [back!, gone!]) {
      const deleted = await api('DELETE', `/records/${id}`);
      expect(deleted.status).toBe(200);
      deletedAt = Math.max(deletedAt, Date.parse(deleted.body.deletedAt as string));
    }

    // 29 days after the deletion (stamped by the database) on the service's clock, which earlier tests moved on.
    clock.advance(Math.max(0, deletedAt + 29 * DAY_MS - clock.now().getTime()));
    const restored = await api('POST', `/records/${back}/restore`, { version: 1 });
    expect(restored.status).toBe(200);

    clock.advance(2 * DAY_MS);
    // Polled with a read (a deleted record's changelog answers until it is gone): the sweep runs every 100 ms.
    let status = 0;
    await eventually(async () => {
      status = (await api('GET', `/records/${gone}/changelog`)).status;
      return status === 404 ? true : undefined;
    }, 30_000).catch(() => undefined);
    expect(status).toBe(404);
    expect((await api('POST', `/records/${gone}/restore`, { version: 1 })).status).toBe(404);
    expect((await api('GET', `/records/${back}`)).body).toMatchObject({ data: { n: 1 } });
  });

  it('changelog entries go after DATA_CHANGELOG_RETENTION_DAYS, unless the collection keeps them longer', async () => {
    const plain = await api('POST', '/structures', { name: 'Log', properties: [{ name: 'n', type: 'number' }] });
    const long = await api('POST', '/structures', {
      name: 'Long log',
      properties: [{ name: 'n', type: 'number' }],
      retentionPolicy: { maxAgeDays: 1000 },
    });
    const ids: string[] = [];
    for (const c of [plain, long]) {
      const r = await api('POST', '/records', { structureId: c.body.id, data: { n: 1 } });
      expect((await api('PATCH', `/records/${r.body.id}`, { data: { n: 2 } })).status).toBe(200);
      ids.push(r.body.id as string);
    }
    const entries = async (id: string) =>
      ((await api('GET', `/records/${id}/changelog`)).body.entries as unknown[]).length;
    expect(await entries(ids[0]!)).toBeGreaterThan(0);
    const kept = await entries(ids[1]!);

    clock.advance(366 * DAY_MS);
    let left = -1;
    await eventually(async () => {
      left = await entries(ids[0]!);
      return left === 0 ? true : undefined;
    }, 30_000).catch(() => undefined);
    expect(left).toBe(0);
    expect(await entries(ids[1]!)).toBe(kept);
  });
});
