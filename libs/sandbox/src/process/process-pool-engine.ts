import path from 'node:path';
import { IsolatePool, WaitAbortedError, type PooledWorker } from '../isolate-pool.js';
import { notStartedResult } from '../job-checks.js';
import { acquireOptions, poolRuns } from '../pool-runs.js';
import {
  SandboxBusyError,
  type SandboxBridge,
  type SandboxEngine,
  type SandboxJob,
  type SandboxResult,
  type SandboxStats,
} from '../types.js';
import type { SandboxProcessSettings } from './protocol.js';
import { SandboxProcessHandle, type SandboxProcessEvents } from './sandbox-process-handle.js';

export interface ProcessPoolEngineOptions extends Omit<SandboxProcessSettings, 'isolates'> {
  /** Isolates in all = runs at once. */
  isolates: number;
  /**
   * Isolates of each sandbox process: ceil(isolates / isolatesPerProcess)
   * processes serve at once (a process that lost an isolate is replaced at once).
   */
  isolatesPerProcess: number;
  /** Runs allowed to wait for a free isolate; beyond that `run` rejects with SandboxBusyError. Default 1000. */
  maxQueue?: number;
  /** Isolates kept from background runs while other runs arrive during a backlog (`IsolatePoolOptions`). */
  reserveForOthers?: { readonly slots: number; readonly ms: number };
  /**
   * How long a process that lost an isolate may go on finishing its other runs
   * before it is ended (they fail as `SandboxLost`). Default 30 s.
   */
  drainMs?: number;
  /**
   * Processes that lost an isolate and still finish their runs, at most; past
   * that the oldest is ended at once. Each holds its lost isolate's heap until it
   * ends (docs/sandbox.md, "Sizing memory"). Default: the processes serving.
   */
  maxDraining?: number;
  /** Told when an isolate was lost (after the run that had it was told, and the process marked lost). */
  onIsolateLost?: (event: { pid: number | undefined; message: string }) => void;
  /** Told when a process ended without being asked to (a native crash, the kernel's OOM killer). */
  onProcessExit?: (event: { pid: number | undefined; detail: string }) => void;
  /** Told each line a process printed (V8's reports; 200 lines a process at most). Default: dropped. */
  onOutput?: (event: { pid: number | undefined; line: string }) => void;
  /** The sandbox process's module (default: this package's built `dist/process/sandbox-process.js`). */
  processModule?: string;
}

/** `dist/process/sandbox-process.js`, from this file built (dist/process) or read as source (src/process, in tests). */
export const SANDBOX_PROCESS_MODULE = path.join(
  import.meta.dirname,
  '..',
  '..',
  'dist',
  'process',
  'sandbox-process.js',
);

/** Node flags of a sandbox process: isolated-vm needs the startup snapshot off. */
const EXEC_ARGV = ['--no-node-snapshot'];

/** Processes a run is sent to before its refusal (each lost an isolate as it arrived) stands. */
const MAX_ATTEMPTS = 3;

/** After a process ended on its own within this long of its start, the next waits (doubling, to 5 s). */
const QUICK_EXIT_MS = 1000;
const MAX_RESPAWN_DELAY_MS = 5000;

/** A slot's isolate: one of `isolatesPerProcess` places on the process serving the slot's position. */
interface ProcessSlot extends PooledWorker {
  readonly home: SandboxProcessHandle;
}

/**
 * An engine whose isolates live in child processes it supervises (a few
 * isolates each), so that an isolate isolated-vm loses costs one small process,
 * not the engine's own: that process takes no further run and is ended once its
 * other runs finished (or after `drainMs`), and a fresh one takes its place at
 * once. Scheduling (fair share, reservations, caps per tenant, the wait queue)
 * is the same `IsolatePool` as the in-process engine's, over slots tied to the
 * processes; each process runs the in-process engine for its own isolates.
 */
export function createProcessPoolEngine(options: ProcessPoolEngineOptions): SandboxEngine {
  const size = positiveInteger(options.isolates, 'isolates');
  const perProcess = Math.min(size, positiveInteger(options.isolatesPerProcess, 'isolatesPerProcess'));
  const count = Math.ceil(size / perProcess);
  const module = options.processModule ?? SANDBOX_PROCESS_MODULE;
  const drainMs = options.drainMs ?? 30_000;
  const maxDraining = options.maxDraining ?? count;
  const settings: SandboxProcessSettings = {
    isolates: perProcess,
    maxRunsPerIsolate: positiveInteger(options.maxRunsPerIsolate, 'maxRunsPerIsolate'),
    ...(options.maxHeapRatio !== undefined ? { maxHeapRatio: options.maxHeapRatio } : {}),
    ...(options.maxArgBytes !== undefined ? { maxArgBytes: options.maxArgBytes } : {}),
    ...(options.maxPendingCalls !== undefined ? { maxPendingCalls: options.maxPendingCalls } : {}),
    ...(options.maxTimers !== undefined ? { maxTimers: options.maxTimers } : {}),
    ...(options.maxApiCalls !== undefined ? { maxApiCalls: options.maxApiCalls } : {}),
    ...(options.idleCheckMs !== undefined ? { idleCheckMs: options.idleCheckMs } : {}),
  };

  let closed = false;
  let nextId = 0;
  let runs = 0;
  /** What ended processes had counted (their last reading). */
  const past = { isolatesCreated: 0, retired: { runs: 0, heap: 0, killed: 0, limitChange: 0, closed: 0 } };
  const lost = { isolates: 0, processes: 0 };
  /** Processes that lost an isolate and finish their runs, oldest first, with their deadline. */
  const draining = new Map<SandboxProcessHandle, NodeJS.Timeout>();
  const respawnDelay: number[] = Array.from({ length: count }, () => 0);

  const events: SandboxProcessEvents = {
    onLost(handle, message) {
      lost.isolates++;
      try {
        options.onIsolateLost?.({ pid: handle.pid, message });
      } catch {
        // a listener's failure must not keep the process from being replaced
      }
      const at = positions.indexOf(handle);
      if (at < 0 || draining.has(handle)) return; // replaced already (a second loss in the same process)
      drain(handle);
      if (!closed) positions[at] = spawn();
    },
    onOutput(handle, line) {
      try {
        options.onOutput?.({ pid: handle.pid, line });
      } catch {
        // a listener's failure is its own
      }
    },
    onIdle(handle) {
      if (handle.state !== 'ended') handle.kill('it lost an isolate and finished its other runs');
    },
    onExit(handle, expected, detail) {
      clearTimeout(draining.get(handle));
      draining.delete(handle);
      if (handle.stats) {
        past.isolatesCreated += handle.stats.isolatesCreated;
        for (const reason of Object.keys(past.retired) as (keyof typeof past.retired)[]) {
          past.retired[reason] += handle.stats.isolatesRetired[reason];
        }
      }
      const at = positions.indexOf(handle);
      if (!expected) {
        lost.processes++;
        try {
          options.onProcessExit?.({ pid: handle.pid, detail });
        } catch {
          // as above
        }
      }
      if (at < 0 || closed) return;
      // The position's own process ended without a loss (a crash): a new one at once, started later if
      // they keep ending at once. Runs sent to it meanwhile wait for it.
      const quick = performance.now() - handle.startedAt < QUICK_EXIT_MS;
      respawnDelay[at] = quick ? Math.min(MAX_RESPAWN_DELAY_MS, Math.max(100, respawnDelay[at]! * 2)) : 0;
      positions[at] = spawn(respawnDelay[at]);
    },
  };

  const spawn = (startAfterMs = 0) => new SandboxProcessHandle(module, settings, EXEC_ARGV, events, startAfterMs);
  const positions: SandboxProcessHandle[] = Array.from({ length: count }, () => spawn());

  /** A process that lost an isolate: it finishes its runs (ended when idle), for `drainMs` at most. */
  const drain = (handle: SandboxProcessHandle) => {
    handle.markLost();
    const timer = setTimeout(
      () => handle.kill(`it lost an isolate and its other runs did not finish within ${drainMs} ms`),
      drainMs,
    );
    timer.unref();
    draining.set(handle, timer);
    while (draining.size > maxDraining) {
      const oldest = draining.keys().next().value!;
      oldest.kill(`more than ${maxDraining} sandbox processes that lost an isolate were finishing their runs`);
      clearTimeout(draining.get(oldest));
      draining.delete(oldest);
    }
    if (handle.running === 0) handle.kill('it lost an isolate');
  };

  const pool = new IsolatePool<ProcessSlot>({
    size,
    maxQueue: options.maxQueue ?? 1000,
    ...(options.reserveForOthers ? { reserveForOthers: options.reserveForOthers } : {}),
    create: (memoryMb, slot) => {
      const home = positions[Math.floor(slot / perProcess)]!;
      return {
        home,
        memoryMb,
        runs: 0,
        // The process's own engine retires its isolates; a slot only points at a place on it.
        dispose: () => undefined,
        usable: () => home.state === 'live' && positions.includes(home),
      };
    },
  });

  const runLeased = async (
    first: { worker: ProcessSlot; release(reason?: 'killed'): void },
    job: SandboxJob,
    bridge: SandboxBridge,
  ): Promise<SandboxResult> => {
    runs++;
    let lease = first;
    for (let attempt = 1; ; attempt++) {
      lease.worker.runs++;
      try {
        return await lease.worker.home.run(nextId++, job, bridge);
      } catch (error) {
        // Sent to a process that lost an isolate before the engine heard of it: the process refused
        // the run before any of it ran, and it goes to another process (the slot now points at one).
        if (!(error instanceof SandboxBusyError) || lease.worker.home.state === 'live' || closed) throw error;
        if (attempt >= MAX_ATTEMPTS) throw error;
      } finally {
        lease.release(lease.worker.home.state === 'live' ? undefined : 'killed');
      }
      try {
        lease = await pool.acquire(job.limits.memoryMb, acquireOptions(job));
      } catch (error) {
        if (error instanceof WaitAbortedError) return notStartedResult();
        throw error;
      }
    }
  };

  const runs$ = poolRuns(pool, runLeased);
  return {
    run: runs$.run,
    tryRun: runs$.tryRun,
    tryReserve: runs$.tryReserve,
    available: runs$.available,
    stats(): SandboxStats {
      const counts = pool.counts();
      const live = [...positions, ...draining.keys()];
      const retired = { ...past.retired };
      let isolates = 0;
      let created = past.isolatesCreated;
      for (const handle of live) {
        if (!handle.stats) continue;
        isolates += handle.stats.isolates;
        created += handle.stats.isolatesCreated;
        for (const reason of Object.keys(retired) as (keyof typeof retired)[]) {
          retired[reason] += handle.stats.isolatesRetired[reason];
        }
      }
      return {
        isolates,
        busy: counts.busy,
        available: pool.available(),
        queued: counts.queued,
        runs,
        isolatesCreated: created,
        isolatesRetired: retired,
        processes: {
          serving: positions.filter((handle) => handle.state === 'live').length,
          draining: draining.size,
          isolatesLost: lost.isolates,
          crashed: lost.processes,
        },
      };
    },
    async close() {
      closed = true;
      pool.close();
      await runs$.settled();
      const ending = [...positions, ...draining.keys()].filter((handle) => handle.state !== 'ended');
      await Promise.all(
        ending.map(
          (handle) =>
            new Promise<void>((resolve) => {
              handle.whenEnded(resolve);
              handle.kill('the engine closed');
            }),
        ),
      );
      for (const timer of draining.values()) clearTimeout(timer);
      draining.clear();
    },
  };
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
