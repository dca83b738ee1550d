/**
 * `@strata/sandbox/processes`: the engine whose isolates live in sandbox
 * processes it supervises. The engine's own process never loads the native
 * add-on; each sandbox process does (`process/sandbox-process.ts`).
 */
export {
  createProcessPoolEngine,
  SANDBOX_PROCESS_MODULE,
  type ProcessPoolEngineOptions,
} from './process/process-pool-engine.js';
export { SANDBOX_LOST } from './process/sandbox-process-handle.js';
