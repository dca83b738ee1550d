import type { OnApplicationShutdown, Provider } from '@nestjs/common';
import type { SandboxEngine } from '@strata/sandbox';
import { createIsolatedVmEngine } from '@strata/sandbox/isolated-vm';
import { ComputeConfig } from '../compute.config.js';
import { stopAfterLostIsolate } from './lost-isolate.js';

/** Injection token of the worker's sandbox engine (an interface: the engine can change). */
export const SANDBOX_ENGINE = Symbol('SandboxEngine');

/** The isolated-vm engine, sized by COMPUTE_WORKER_ISOLATES; closed when the worker shuts down. */
export const SandboxEngineProvider: Provider = {
  provide: SANDBOX_ENGINE,
  inject: [ComputeConfig],
  useFactory: (config: ComputeConfig): SandboxEngine & OnApplicationShutdown => {
    const engine = createIsolatedVmEngine({
      isolates: config.COMPUTE_WORKER_ISOLATES,
      maxRunsPerIsolate: config.COMPUTE_RUNS_PER_ISOLATE,
      onCatastrophicError: stopAfterLostIsolate,
    });
    return Object.assign(engine, { onApplicationShutdown: () => engine.close() });
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
  inject: [ComputeConfig],
  useFactory: (config: ComputeConfig): SandboxEngine & OnApplicationShutdown => {
    const engine = createIsolatedVmEngine({
      isolates: Math.max(1, config.COMPUTE_WORKER_ENDPOINT_ISOLATES),
      maxRunsPerIsolate: config.COMPUTE_RUNS_PER_ISOLATE,
      onCatastrophicError: stopAfterLostIsolate,
    });
    return Object.assign(engine, { onApplicationShutdown: () => engine.close() });
  },
};
