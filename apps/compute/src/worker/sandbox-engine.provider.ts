import type { BeforeApplicationShutdown, OnApplicationShutdown, Provider } from '@nestjs/common';
import type { SandboxEngine } from '@strata/sandbox';
import { createIsolatedVmEngine } from '@strata/sandbox/isolated-vm';
import { ComputeConfig } from '../compute.config.js';
import { WorkspaceSuspensions } from '../suspensions/workspace-suspensions.js';
import { stopAfterLostIsolate } from './lost-isolate.js';

/** How long after another workspace's run arrived during a backlog the reserved isolates stay kept. */
const RESERVE_FOR_OTHERS_MS = 2000;

/** Injection token of the worker's sandbox engine (an interface: the engine can change). */
export const SANDBOX_ENGINE = Symbol('SandboxEngine');

/**
 * The isolated-vm engine, sized by COMPUTE_WORKER_ISOLATES. It closes as soon
 * as the worker starts to stop (after the job consumer stopped taking jobs):
 * the runs waiting for an isolate are refused at once, and their executor hands
 * them back to the queue for another worker, instead of running them during the
 * stop (a backlog of long runs outlasted COMPUTE_WORKER_STOP_MS and was lost).
 * The runs under way finish.
 */
export const SandboxEngineProvider: Provider = {
  provide: SANDBOX_ENGINE,
  inject: [ComputeConfig, WorkspaceSuspensions],
  useFactory: (
    config: ComputeConfig,
    suspensions: WorkspaceSuspensions,
  ): SandboxEngine & BeforeApplicationShutdown & OnApplicationShutdown => {
    const reserved = Math.min(config.COMPUTE_WORKER_RESERVED_ISOLATES, config.COMPUTE_WORKER_ISOLATES - 1);
    const engine = createIsolatedVmEngine({
      isolates: config.COMPUTE_WORKER_ISOLATES,
      maxRunsPerIsolate: config.COMPUTE_RUNS_PER_ISOLATE,
      onCatastrophicError: stopAfterLostIsolate,
      // docs/compute.md, "Fair share": a light workspace's run finds an isolate free during a backlog.
      ...(reserved > 0 ? { reserveForOthers: { slots: reserved, ms: RESERVE_FOR_OTHERS_MS } } : {}),
    });
    let closing: Promise<void> | undefined;
    // A run that ends during the stop may lose its isolate too: its loss is written before NATS is drained.
    const close = () => (closing ??= engine.close().then(() => suspensions.settled()));
    return Object.assign(engine, {
      // Refuses the waiting runs now; the stop goes on meanwhile, and waits for the running ones below.
      beforeApplicationShutdown: () => {
        close().catch(() => undefined);
      },
      onApplicationShutdown: close,
    });
  },
};

/** Injection token of the worker's endpoint engine: isolates kept for endpoint runs only. */
export const ENDPOINT_SANDBOX_ENGINE = Symbol('EndpointSandboxEngine');

/**
 * The isolates of endpoint runs (COMPUTE_WORKER_ENDPOINT_ISOLATES), apart from
 * the background engine: a synchronous call never waits behind queued jobs.
 */
export const EndpointSandboxEngineProvider: Provider = {
  provide: ENDPOINT_SANDBOX_ENGINE,
  inject: [ComputeConfig, WorkspaceSuspensions],
  useFactory: (config: ComputeConfig, suspensions: WorkspaceSuspensions): SandboxEngine & OnApplicationShutdown => {
    const engine = createIsolatedVmEngine({
      isolates: Math.max(1, config.COMPUTE_WORKER_ENDPOINT_ISOLATES),
      maxRunsPerIsolate: config.COMPUTE_RUNS_PER_ISOLATE,
      onCatastrophicError: stopAfterLostIsolate,
    });
    return Object.assign(engine, { onApplicationShutdown: () => engine.close().then(() => suspensions.settled()) });
  },
};
