import { describe, expect, it, jest } from '@jest/globals';
import { IsolatePool, type PooledWorker, type RetireReason } from './isolate-pool.js';

class FakeWorker implements PooledWorker {
  runs = 0;
  disposed = false;
  lost = false;
  constructor(
    readonly memoryMb: number,
    readonly id: number,
  ) {}
  dispose(): void {
    this.disposed = true;
  }
  usable(): boolean {
    return !this.lost;
  }
}

function fakePool(size: number, maxQueue = 10) {
  const retired: RetireReason[] = [];
  let next = 0;
  const pool = new IsolatePool<FakeWorker>({
    size,
    maxQueue,
    create: (memoryMb) => new FakeWorker(memoryMb, next++),
    onRetire: (reason) => retired.push(reason),
  });
  return { pool, retired };
}

describe('IsolatePool', () => {
  it('replaces a worker lost while idle before its next run', () => {
    const { pool, retired } = fakePool(1);
    const first = pool.tryAcquire(32)!;
    first.release();
    first.worker.lost = true;
    const second = pool.tryAcquire(32)!;
    expect(second.worker).not.toBe(first.worker);
    expect(retired).toEqual(['killed']);
  });

  it('reuses an idle worker with the same memory limit', () => {
    const { pool } = fakePool(2);
    const first = pool.tryAcquire(32)!;
    first.release();
    const second = pool.tryAcquire(32)!;
    expect(second.worker).toBe(first.worker);
  });

  it('prefers an empty slot to replacing a worker of another limit, and replaces when it must', () => {
    const { pool, retired } = fakePool(2);
    const a = pool.tryAcquire(32)!;
    a.release();
    const b = pool.tryAcquire(64)!;
    expect(b.worker).not.toBe(a.worker);
    expect(a.worker.disposed).toBe(false);
    b.release();
    const held = pool.tryAcquire(64)!;
    const c = pool.tryAcquire(128)!;
    expect(a.worker.disposed).toBe(true);
    expect(c.worker.memoryMb).toBe(128);
    expect(retired).toEqual(['limitChange']);
    held.release();
    c.release();
    expect(pool.counts().isolates).toBe(2);
  });

  it('hands a released slot to the first waiter, and bounds the queue', async () => {
    const { pool } = fakePool(1, 2);
    const lease = pool.tryAcquire(32)!;
    expect(pool.tryAcquire(32)).toBeUndefined();
    expect(pool.available()).toBe(0);
    const order: number[] = [];
    const first = pool.acquire(32).then((l) => {
      order.push(1);
      l.release();
    });
    const second = pool.acquire(32).then((l) => {
      order.push(2);
      l.release();
    });
    await expect(pool.acquire(32)).rejects.toMatchObject({ name: 'SandboxBusyError' });
    lease.release();
    await Promise.all([first, second]);
    expect(order).toEqual([1, 2]);
    expect(pool.available()).toBe(1);
  });

  it('hands a slot to a background waiter behind the others, but one slot in four while both wait', async () => {
    const { pool } = fakePool(1, 20);
    const lease = pool.tryAcquire(32)!;
    const order: string[] = [];
    const take = (name: string, background: boolean) =>
      pool.acquire(32, { background }).then((l) => {
        order.push(name);
        l.release();
      });
    const waits = [
      take('backlog-1', true),
      take('backlog-2', true),
      take('run-1', false),
      take('backlog-3', true),
      take('run-2', false),
    ];
    lease.release();
    await Promise.all(waits);
    expect(order).toEqual(['run-1', 'run-2', 'backlog-1', 'backlog-2', 'backlog-3']);

    // A stream of other runs: every fourth slot goes to the waiting backlog.
    const held = pool.tryAcquire(32)!;
    order.length = 0;
    const more = [take('backlog-a', true), take('backlog-b', true)];
    for (let i = 1; i <= 8; i++) more.push(take(`run-${i}`, false));
    held.release();
    await Promise.all(more);
    expect(order).toEqual([
      'run-1',
      'run-2',
      'run-3',
      'backlog-a',
      'run-4',
      'run-5',
      'run-6',
      'backlog-b',
      'run-7',
      'run-8',
    ]);
  });

  it('keeps a slot from background runs while other runs keep arriving during a backlog', async () => {
    jest.useFakeTimers();
    let now = 0;
    const pool = new IsolatePool<FakeWorker>({
      size: 2,
      maxQueue: 10,
      create: (memoryMb) => new FakeWorker(memoryMb, 0),
      reserveForOthers: { slots: 1, ms: 1000, now: () => now },
    });
    // No backlog about: a workspace's own first run reserves nothing, and its backlog takes both slots.
    const first = await pool.acquire(32);
    first.release();
    const backlog1 = await pool.acquire(32, { background: true });
    const backlog2 = await pool.acquire(32, { background: true });
    backlog2.release();
    // Another workspace's run arrives during the backlog: from then on one slot is kept for such runs.
    const other = await pool.acquire(32);
    other.release();
    let waited = false;
    const backlog3 = pool.acquire(32, { background: true }).then((lease) => {
      waited = true;
      return lease;
    });
    await Promise.resolve();
    expect(waited).toBe(false);
    expect(pool.available()).toBe(1);
    // The next one takes the kept slot at once.
    const another = pool.tryAcquire(32)!;
    expect(another).toBeDefined();
    another.release();
    // Once no other run came for the window, the kept slot goes to the backlog.
    now += 1000;
    jest.advanceTimersByTime(1001);
    const lease3 = await backlog3;
    expect(waited).toBe(true);
    lease3.release();
    backlog1.release();
    expect(pool.available()).toBe(2);
    jest.useRealTimers();
  });

  it('takes a waiter whose signal is aborted out of the queue, and the slot goes to the next one', async () => {
    const { pool } = fakePool(1, 2);
    const lease = pool.tryAcquire(32)!;
    const given = new AbortController();
    const gaveUp = pool.acquire(32, { signal: given.signal });
    const next = pool.acquire(32);
    expect(pool.counts().queued).toBe(2);
    given.abort();
    await expect(gaveUp).rejects.toMatchObject({ name: 'WaitAbortedError' });
    expect(pool.counts().queued).toBe(1);
    lease.release();
    (await next).release();
    expect(pool.available()).toBe(1);
    // Already aborted: not even queued. Aborted after it was handed a slot: the lease stands.
    await expect(pool.acquire(32, { signal: given.signal })).rejects.toMatchObject({ name: 'WaitAbortedError' });
    const late = new AbortController();
    const held = await pool.acquire(32, { signal: late.signal });
    late.abort();
    expect(pool.available()).toBe(0);
    held.release();
    expect(pool.available()).toBe(1);
  });

  it('holds a reserved slot against every other taker until it is leased or given back', async () => {
    const { pool, retired } = fakePool(1);
    const reservation = pool.tryReserve()!;
    expect(pool.available()).toBe(0);
    expect(pool.tryAcquire(32)).toBeUndefined();
    expect(pool.tryReserve()).toBeUndefined();
    const waiting = pool.acquire(32);
    // The held slot is the reserver's, whatever waits: leased for its own limit.
    const lease = reservation.lease(64);
    expect(lease.worker.memoryMb).toBe(64);
    expect(() => reservation.lease(64)).toThrow(/already used/);
    reservation.cancel(); // nothing once leased
    expect(pool.available()).toBe(0);
    lease.release();
    expect((await waiting).worker.memoryMb).toBe(32);
    expect(retired).toEqual(['limitChange']);
  });

  it('gives a cancelled reservation to the first waiter', async () => {
    const { pool } = fakePool(1);
    const reservation = pool.tryReserve()!;
    const waiting = pool.acquire(32);
    reservation.cancel();
    expect((await waiting).worker.memoryMb).toBe(32);
    expect(() => reservation.lease(32)).toThrow(/already used/);
  });

  it('refuses to lease a reservation after close', () => {
    const { pool } = fakePool(1);
    const reservation = pool.tryReserve()!;
    pool.close();
    expect(() => reservation.lease(32)).toThrow(/closed/);
    expect(pool.tryReserve()).toBeUndefined();
  });

  it('retires a worker released with a reason and creates a new one next time', () => {
    const { pool, retired } = fakePool(1);
    const lease = pool.tryAcquire(32)!;
    lease.release('runs');
    lease.release('heap'); // a second release is ignored
    expect(lease.worker.disposed).toBe(true);
    expect(retired).toEqual(['runs']);
    expect(pool.tryAcquire(32)!.worker).not.toBe(lease.worker);
  });

  it('closes: rejects waiters, disposes idle workers now and busy ones on release', async () => {
    const { pool, retired } = fakePool(2);
    const busy = pool.tryAcquire(32)!;
    const idle = pool.tryAcquire(32)!;
    idle.release();
    const waiting = pool.tryAcquire(32);
    expect(waiting).toBeDefined();
    const queued = pool.acquire(32);
    pool.close();
    await expect(queued).rejects.toMatchObject({ name: 'SandboxBusyError' });
    await expect(pool.acquire(32)).rejects.toMatchObject({ name: 'SandboxBusyError' });
    expect(pool.tryAcquire(32)).toBeUndefined();
    busy.release();
    waiting!.release();
    expect(busy.worker.disposed && waiting!.worker.disposed).toBe(true);
    expect(pool.counts().isolates).toBe(0);
    expect(retired.every((reason) => reason === 'closed')).toBe(true);
  });

  it('keeps a tenant to its cap: its next run waits with a slot free, and others go past it', async () => {
    const { pool } = fakePool(3);
    const a = { key: 'a', maxRuns: 2 };
    const first = pool.tryAcquire(32, a)!;
    const second = await pool.acquire(32, { tenant: a });
    expect(pool.tryAcquire(32, a)).toBeUndefined();
    let third: { release(): void } | undefined;
    const waiting = pool.acquire(32, { tenant: a }).then((lease) => (third = lease));
    // The free slot goes to another tenant's run, queued after a's.
    const other = await pool.acquire(32, { tenant: { key: 'b', maxRuns: 2 } });
    expect(third).toBeUndefined();
    other.release();
    expect(third).toBeUndefined();
    first.release();
    await waiting;
    expect(third).toBeDefined();
    second.release();
    third!.release();
    expect(pool.counts().busy).toBe(0);
  });

  it('counts a tenant once on a reserved slot, and frees its share on release', () => {
    const { pool } = fakePool(2);
    const one = { key: 'solo', maxRuns: 1 };
    const reserved = pool.tryReserve()!;
    const lease = reserved.lease(32, one);
    expect(pool.tryAcquire(32, one)).toBeUndefined();
    lease.release();
    pool.tryAcquire(32, one)!.release();
  });

  it('reads a tenant’s cap when it hands out a slot: waits queued before the cap was lowered wait too', async () => {
    const { pool } = fakePool(2);
    let cap = 2;
    const a = {
      key: 'a',
      get maxRuns() {
        return cap;
      },
    };
    const first = pool.tryAcquire(32, a)!;
    const second = pool.tryAcquire(32, a)!;
    let third: { release(): void } | undefined;
    const waiting = pool.acquire(32, { tenant: a }).then((lease) => (third = lease));
    // The workspace loses an isolate meanwhile: one at a time from now on.
    cap = 1;
    first.release();
    await Promise.resolve();
    expect(third).toBeUndefined();
    // Another tenant's run takes the free slot instead.
    const other = pool.tryAcquire(32, { key: 'b', maxRuns: 1 });
    expect(other).toBeDefined();
    other!.release();
    second.release();
    await waiting;
    expect(third).toBeDefined();
    third!.release();
  });
});
