import { IsolatePool, WaitAbortedError, type Lease, type PooledWorker } from './isolate-pool.js';
import { invalidJob, notStartedResult } from './job-checks.js';
import type { SandboxBridge, SandboxEngine, SandboxJob, SandboxResult } from './types.js';

/** How a job waits for a slot: its stop signal, its kind of wait, its tenant. */
export function acquireOptions(job: SandboxJob): Parameters<IsolatePool<PooledWorker>['acquire']>[1] {
  return {
    ...(job.stop ? { signal: job.stop } : {}),
    background: job.background === true,
    ...(job.tenant ? { tenant: job.tenant } : {}),
  };
}

/**
 * The engine methods that lease one of a pool's slots for a job and run it
 * there with `runLeased` (which releases the lease): both engines schedule the
 * same way, and differ only in where a leased slot's isolate lives. `settled`
 * waits for every run under way (an engine's close).
 */
export function poolRuns<W extends PooledWorker>(
  pool: IsolatePool<W>,
  runLeased: (lease: Lease<W>, job: SandboxJob, bridge: SandboxBridge) => Promise<SandboxResult>,
): Pick<SandboxEngine, 'run' | 'tryRun' | 'tryReserve' | 'available'> & { settled(): Promise<void> } {
  const running = new Set<Promise<unknown>>();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    running.add(promise);
    void promise.finally(() => running.delete(promise)).catch(() => undefined);
    return promise;
  };
  return {
    run(job, bridge) {
      const invalid = invalidJob(job);
      if (invalid) return Promise.reject(invalid);
      return track(
        pool.acquire(job.limits.memoryMb, acquireOptions(job)).then(
          (lease) => runLeased(lease, job, bridge),
          (error: unknown) => {
            // Stopped while it waited for an isolate: it never touched one.
            if (error instanceof WaitAbortedError) return notStartedResult();
            throw error;
          },
        ),
      );
    },
    tryRun(job, bridge) {
      const invalid = invalidJob(job);
      if (invalid) return Promise.reject(invalid);
      const lease = pool.tryAcquire(job.limits.memoryMb, job.tenant); // undefined after close, too
      return lease ? track(runLeased(lease, job, bridge)) : undefined;
    },
    tryReserve() {
      const reserved = pool.tryReserve(); // undefined after close, too
      if (!reserved) return undefined;
      return {
        run(job, bridge) {
          const invalid = invalidJob(job);
          if (invalid) {
            reserved.cancel();
            return Promise.reject(invalid);
          }
          let lease;
          try {
            lease = reserved.lease(job.limits.memoryMb, job.tenant);
          } catch (error) {
            return Promise.reject(error instanceof Error ? error : new Error(String(error)));
          }
          return track(runLeased(lease, job, bridge));
        },
        release: () => reserved.cancel(),
      };
    },
    available: () => pool.available(),
    async settled() {
      await Promise.allSettled([...running]);
    },
  };
}
