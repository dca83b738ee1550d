import { SandboxBusyError, type SandboxTenant } from './types.js';

/** While both kinds wait, one freed slot in this many goes to a background wait. */
export const BACKGROUND_SHARE = 4;

/** A wait for a slot that its caller gave up (its signal was aborted). */
export class WaitAbortedError extends Error {
  override readonly name = 'WaitAbortedError';
  constructor() {
    super('The wait for an isolate was given up');
  }
}

/** Why an isolate left the pool. */
export type RetireReason = 'runs' | 'heap' | 'killed' | 'limitChange' | 'closed';

/** What the pool needs from the thing it pools (an isolated-vm Isolate in production). */
export interface PooledWorker {
  readonly memoryMb: number;
  runs: number;
  dispose(): void;
  /** False once the worker was lost while idle (it is replaced before its next run). */
  usable?(): boolean;
}

interface Slot<W extends PooledWorker> {
  worker?: W;
  busy: boolean;
  /** Leased to a background run. */
  background?: boolean;
  /** The key of the tenant the slot is leased to. */
  tenant?: string;
}

/** Whose run a lease is for (`SandboxTenant`); leases without one are not counted. */
export type PoolTenant = SandboxTenant;

interface Waiter<W extends PooledWorker> {
  memoryMb: number;
  background: boolean;
  tenant: PoolTenant | undefined;
  resolve(lease: Lease<W>): void;
  reject(error: Error): void;
}

export interface Lease<W extends PooledWorker> {
  readonly worker: W;
  /** Gives the slot back; with a reason, the worker is disposed first (the next run gets a new one). */
  release(retire?: RetireReason): void;
}

/** An idle slot held for a run whose memory limit is not known yet. */
export interface SlotReservation<W extends PooledWorker> {
  /** The held slot, leased for `memoryMb` (counted for `tenant`); once. */
  lease(memoryMb: number, tenant?: PoolTenant): Lease<W>;
  /** Gives the slot back unused; nothing once leased. */
  cancel(): void;
}

export interface IsolatePoolOptions<W extends PooledWorker> {
  /** Runs at once = workers alive at most. */
  size: number;
  /** Runs allowed to wait for a slot; beyond that, `acquire` rejects with SandboxBusyError. */
  maxQueue: number;
  /** A worker for slot number `slot` (0 to size - 1): an engine may tie slots to where their workers live. */
  create(memoryMb: number, slot: number): W;
  onRetire?(reason: RetireReason): void;
  /**
   * Keeps `slots` slots from background runs while other runs keep arriving
   * during a backlog (one came in the last `ms` while a background run waited
   * or ran), so that another workspace's run finds a slot free instead of
   * waiting for a long backlog run to end. Runs that arrive with no backlog
   * about (a workspace's own first jobs) reserve nothing. `now` for tests.
   */
  reserveForOthers?: { readonly slots: number; readonly ms: number; readonly now?: () => number };
}

/**
 * A fixed number of slots, each holding at most one worker (isolate) created for one memory limit.
 * A run asks for a slot for its memory limit: an idle slot whose worker has that limit, else an empty
 * idle slot, else an idle slot whose worker is replaced by one with that limit. So the number of
 * isolates, and of runs at once, never exceeds `size`, whatever mix of limits the runs ask for.
 */
export class IsolatePool<W extends PooledWorker> {
  private readonly slots: Slot<W>[];
  private readonly waiters: Waiter<W>[] = [];
  /** Slots handed to other waits in a row while a background wait was waiting too. */
  private overtaken = 0;
  /** Slots leased to background runs. */
  private busyBackground = 0;
  /** Slots leased per tenant key (`PoolTenant`). */
  private readonly held = new Map<string, number>();
  /** When another run last arrived during a backlog (`reserveForOthers`). */
  private lastOther = Number.NEGATIVE_INFINITY;
  private recheck: NodeJS.Timeout | undefined;
  private closed = false;
  private created = 0;

  constructor(private readonly options: IsolatePoolOptions<W>) {
    if (!Number.isInteger(options.size) || options.size < 1)
      throw new RangeError('The pool needs at least one isolate');
    this.slots = Array.from({ length: options.size }, () => ({ busy: false }));
  }

  /** A slot now, or undefined when every slot is busy (or the pool is closed). */
  tryAcquire(memoryMb: number, tenant?: PoolTenant): Lease<W> | undefined {
    if (this.closed || this.atCap(tenant)) return undefined;
    this.noteOther();
    const slot = this.pickIdle(memoryMb);
    return slot ? this.lease(slot, memoryMb, false, tenant) : undefined;
  }

  /**
   * Holds an idle slot now (busy from here on) for a lease to come; undefined
   * when every slot is busy (or the pool is closed).
   */
  tryReserve(): SlotReservation<W> | undefined {
    if (this.closed) return undefined;
    this.noteOther();
    const slot = this.slots.find((candidate) => !candidate.busy);
    if (!slot) return undefined;
    slot.busy = true;
    let settled = false;
    return {
      lease: (memoryMb, tenant) => {
        if (settled) throw new SandboxBusyError('The reserved isolate was already used or given back');
        settled = true;
        if (this.closed) {
          this.free(slot);
          throw new SandboxBusyError('The sandbox engine is closed');
        }
        // Held for this run before its tenant was known: counted, not refused (its caller checked its own cap).
        return this.lease(slot, memoryMb, false, tenant);
      },
      cancel: () => {
        if (settled) return;
        settled = true;
        this.free(slot);
      },
    };
  }

  /**
   * A slot, waiting when every slot is busy: in FIFO order, except that a
   * `background` wait goes behind every other wait (a workspace's backlog waits
   * behind everyone else's runs), but for one slot in `BACKGROUND_SHARE` while
   * both kinds wait, so a stream of other runs never starves it. A wait whose
   * `tenant` holds its `maxRuns` slots already waits, even with a slot free,
   * until one of them is released; others go past it. Aborting `signal` while
   * it waits takes it out of the queue: it rejects with `WaitAbortedError`.
   */
  acquire(
    memoryMb: number,
    options: { signal?: AbortSignal; background?: boolean; tenant?: PoolTenant } = {},
  ): Promise<Lease<W>> {
    const { signal, background = false, tenant } = options;
    if (this.closed) return Promise.reject(new SandboxBusyError('The sandbox engine is closed'));
    if (signal?.aborted) return Promise.reject(new WaitAbortedError());
    if (!background) this.noteOther();
    const idle = this.atCap(tenant) ? undefined : this.pickIdle(memoryMb);
    if (idle && (!background || this.backgroundMayTake()))
      return Promise.resolve(this.lease(idle, memoryMb, background, tenant));
    if (idle) this.scheduleRecheck();
    if (this.waiters.length >= this.options.maxQueue) {
      return Promise.reject(new SandboxBusyError('Every isolate is busy and the wait queue is full'));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at < 0) return; // handed a slot already
        this.waiters.splice(at, 1);
        reject(new WaitAbortedError());
      };
      const waiter: Waiter<W> = {
        memoryMb,
        background,
        tenant,
        resolve: (lease) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(lease);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  available(): number {
    return this.closed ? 0 : this.slots.filter((slot) => !slot.busy).length;
  }

  counts(): { isolates: number; busy: number; queued: number; created: number } {
    return {
      isolates: this.slots.filter((slot) => slot.worker).length,
      busy: this.slots.filter((slot) => slot.busy).length,
      queued: this.waiters.length,
      created: this.created,
    };
  }

  /** Rejects the waiters; disposes the idle workers now and the busy ones when they are released. */
  close(): void {
    this.closed = true;
    clearTimeout(this.recheck);
    for (const waiter of this.waiters.splice(0)) waiter.reject(new SandboxBusyError('The sandbox engine is closed'));
    for (const slot of this.slots) if (!slot.busy) this.retire(slot, 'closed');
  }

  private pickIdle(memoryMb: number): Slot<W> | undefined {
    const idle = this.slots.filter((slot) => !slot.busy);
    return idle.find((slot) => slot.worker?.memoryMb === memoryMb) ?? idle.find((slot) => !slot.worker) ?? idle[0];
  }

  private lease(slot: Slot<W>, memoryMb: number, background: boolean, tenant: PoolTenant | undefined): Lease<W> {
    if (slot.worker && slot.worker.usable?.() === false) this.retire(slot, 'killed');
    if (slot.worker && slot.worker.memoryMb !== memoryMb) this.retire(slot, 'limitChange');
    if (!slot.worker) {
      slot.worker = this.options.create(memoryMb, this.slots.indexOf(slot));
      this.created++;
    }
    slot.busy = true;
    slot.background = background;
    if (background) this.busyBackground++;
    if (tenant) {
      slot.tenant = tenant.key;
      this.held.set(tenant.key, (this.held.get(tenant.key) ?? 0) + 1);
    }
    const worker = slot.worker;
    let released = false;
    return {
      worker,
      release: (reason?: RetireReason) => {
        if (released) return;
        released = true;
        if (slot.background) this.busyBackground--;
        slot.background = false;
        if (slot.tenant !== undefined) {
          const left = (this.held.get(slot.tenant) ?? 1) - 1;
          if (left > 0) this.held.set(slot.tenant, left);
          else this.held.delete(slot.tenant);
          slot.tenant = undefined;
        }
        if (reason) this.retire(slot, reason);
        this.free(slot);
      },
    };
  }

  /** Whether `tenant` holds as many slots as it may. */
  private atCap(tenant: PoolTenant | undefined): boolean {
    return tenant !== undefined && (this.held.get(tenant.key) ?? 0) >= Math.max(1, tenant.maxRuns);
  }

  private free(slot: Slot<W>): void {
    slot.busy = false;
    this.handOver(slot);
  }

  private handOver(slot: Slot<W>): void {
    if (this.closed) {
      this.retire(slot, 'closed');
      return;
    }
    let next = this.nextWaiter();
    if (next < 0) return;
    if (this.waiters[next]!.background && !this.backgroundMayTake()) {
      // Kept for another workspace's run: given to one waiting, or left free for the next to come.
      next = this.waiters.findIndex((candidate) => !candidate.background && !this.atCap(candidate.tenant));
      if (next < 0) {
        this.scheduleRecheck();
        return;
      }
    }
    const [waiter] = this.waiters.splice(next, 1);
    if (!waiter) return;
    try {
      waiter.resolve(this.lease(slot, waiter.memoryMb, waiter.background, waiter.tenant));
    } catch (error) {
      slot.busy = false;
      waiter.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private now(): number {
    const now = this.options.reserveForOthers?.now;
    return now ? now() : performance.now();
  }

  /** Another run arrives: during a backlog, the reserved slots are kept for the likes of it. */
  private noteOther(): void {
    if (!this.options.reserveForOthers) return;
    if (this.busyBackground > 0 || this.waiters.some((waiter) => waiter.background)) this.lastOther = this.now();
  }

  /** Whether a background run may take a free slot now. */
  private backgroundMayTake(): boolean {
    const reserve = this.options.reserveForOthers;
    if (!reserve || this.busyBackground < this.options.size - reserve.slots) return true;
    return this.now() - this.lastOther >= reserve.ms;
  }

  /** Hands the slots kept free to background runs once no other run came for `reserveForOthers.ms`. */
  private scheduleRecheck(): void {
    const reserve = this.options.reserveForOthers;
    if (!reserve || this.recheck || this.closed) return;
    const delay = Math.max(1, Math.ceil(this.lastOther + reserve.ms - this.now()));
    this.recheck = setTimeout(() => {
      this.recheck = undefined;
      for (const slot of this.slots) if (!slot.busy && this.waiters.length > 0) this.handOver(slot);
    }, delay);
    this.recheck.unref();
  }

  /** The waiter a freed slot goes to (`acquire`); -1 when every waiter's tenant is at its cap. */
  private nextWaiter(): number {
    const other = this.waiters.findIndex((candidate) => !candidate.background && !this.atCap(candidate.tenant));
    const background = this.waiters.findIndex((candidate) => candidate.background && !this.atCap(candidate.tenant));
    if (other < 0 || background < 0) {
      this.overtaken = 0;
      return Math.max(other, background);
    }
    if (this.overtaken >= BACKGROUND_SHARE - 1) {
      this.overtaken = 0;
      return background;
    }
    this.overtaken++;
    return other;
  }

  private retire(slot: Slot<W>, reason: RetireReason): void {
    const worker = slot.worker;
    if (!worker) return;
    slot.worker = undefined;
    try {
      worker.dispose();
    } catch {
      // Already disposed (memory limit, or killed by the run's own timer).
    }
    this.options.onRetire?.(reason);
  }
}
