import { Logger, type BeforeApplicationShutdown, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import type { SandboxEngine } from '@strata/sandbox';
import { createProcessPoolEngine, type ProcessPoolEngineOptions } from '@strata/sandbox/processes';
import { ComputeConfig } from '../compute.config.js';
import { WorkspaceSuspensions } from '../suspensions/workspace-suspensions.js';

/** How long after another workspace's run arrived during a backlog the reserved isolates stay kept. */
const RESERVE_FOR_OTHERS_MS = 2000;

/** Injection token of the worker's sandbox engine (an interface: the engine can change). */
export const SANDBOX_ENGINE = Symbol('SandboxEngine');

const logger = new Logger('SandboxWorker');

/**
 * What both of a worker's engines share: isolates in sandbox processes of
 * COMPUTE_SANDBOX_ISOLATES_PER_PROCESS each, so an isolate V8 loses costs one
 * of those processes (replaced at once), never the worker and its other runs.
 */
function engineOptions(config: ComputeConfig, name: string, isolates: number): ProcessPoolEngineOptions {
  return {
    isolates,
    isolatesPerProcess: config.COMPUTE_SANDBOX_ISOLATES_PER_PROCESS,
    maxRunsPerIsolate: config.COMPUTE_RUNS_PER_ISOLATE,
    maxApiCalls: config.COMPUTE_MAX_API_CALLS,
    idleCheckMs: config.COMPUTE_IDLE_CHECK_MS,
    drainMs: config.COMPUTE_SANDBOX_DRAIN_MS,
    maxDraining: config.COMPUTE_SANDBOX_MAX_DRAINING,
    onIsolateLost: ({ pid, message }) =>
      logger.warn({
        msg: 'a sandbox process lost an isolate; it finishes its other runs and is replaced',
        engine: name,
        pid,
        reason: message,
      }),
    onProcessExit: ({ pid, detail }) =>
      logger.error({ msg: 'a sandbox process ended unexpectedly; it is replaced', engine: name, pid, detail }),
    // V8's own report (the collections before a lost isolate, a fatal error), one log entry a line.
    onOutput: ({ pid, line }) => logger.warn({ msg: 'sandbox process output', engine: name, pid, line }),
  };
}

/** Isolates of an engine one workspace may hold at once (COMPUTE_WORKSPACE_ISOLATES; 0: all but one). */
export function workspaceIsolates(config: ComputeConfig, isolates: number): number {
  return config.COMPUTE_WORKSPACE_ISOLATES > 0
    ? Math.min(config.COMPUTE_WORKSPACE_ISOLATES, isolates)
    : Math.max(1, isolates - 1);
}

/**
 * The background engine, sized by COMPUTE_WORKER_ISOLATES. It closes as soon
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
    const engine = createProcessPoolEngine({
      ...engineOptions(config, 'background', config.COMPUTE_WORKER_ISOLATES),
      // docs/compute.md, "Fair share": a light workspace's run finds an isolate free during a backlog.
      ...(reserved > 0 ? { reserveForOthers: { slots: reserved, ms: RESERVE_FOR_OTHERS_MS } } : {}),
    });
    let closing: Promise<void> | undefined;
    // Losses of the last runs are written before NATS is drained.
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
    const engine = createProcessPoolEngine(
      engineOptions(config, 'endpoint', Math.max(1, config.COMPUTE_WORKER_ENDPOINT_ISOLATES)),
    );
    return Object.assign(engine, { onApplicationShutdown: () => engine.close().then(() => suspensions.settled()) });
  },
};
