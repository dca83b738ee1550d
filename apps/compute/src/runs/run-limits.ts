import type { ComputeConfig } from '../compute.config.js';

/** The limits a run is executed under, recorded on its row. */
export interface RunLimits {
  readonly memoryMb: number;
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly maxLogBytes: number;
  readonly maxLogEntries: number;
  readonly maxOutputBytes: number;
}

export function defaultRunLimits(config: ComputeConfig): RunLimits {
  return {
    memoryMb: config.COMPUTE_MEMORY_MB,
    cpuMs: config.COMPUTE_CPU_MS,
    wallMs: config.COMPUTE_WALL_MS,
    maxLogBytes: config.COMPUTE_MAX_LOG_BYTES,
    maxLogEntries: config.COMPUTE_MAX_LOG_ENTRIES,
    maxOutputBytes: config.COMPUTE_MAX_OUTPUT_BYTES,
  };
}
