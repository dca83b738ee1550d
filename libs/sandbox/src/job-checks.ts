import type { SandboxJob, SandboxLimits, SandboxResult } from './types.js';

/** Why a job cannot run at all (a caller's mistake, not user code's), checked by every engine before it waits. */
export function invalidJob(job: SandboxJob): Error | undefined {
  if (job.kind !== 'run' && job.kind !== 'endpoint') return new TypeError(`Unknown function kind ${String(job.kind)}`);
  if (typeof job.code !== 'string') return new TypeError('The code must be a string');
  const limits: Partial<SandboxLimits> = job.limits ?? {};
  for (const name of ['memoryMb', 'cpuMs', 'wallMs', 'maxLogBytes', 'maxLogEntries', 'maxOutputBytes'] as const) {
    const value = limits[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      return new RangeError(`limits.${name} must be a finite number >= 0`);
    }
  }
  if (!Number.isInteger(limits.memoryMb) || limits.memoryMb! < 8) {
    return new RangeError('limits.memoryMb must be an integer >= 8 (isolated-vm minimum)');
  }
  if (limits.cpuMs! <= 0 || limits.wallMs! <= 0) return new RangeError('limits.cpuMs and limits.wallMs must be > 0');
  return undefined;
}

export const NOT_STARTED_MESSAGE = 'The run was not started.';

/** The result of a run stopped before it had an isolate. */
export function notStartedResult(): SandboxResult {
  return {
    status: 'failed',
    error: { name: 'NotStarted', message: NOT_STARTED_MESSAGE },
    logs: [],
    logsTruncated: false,
    cpuMs: 0,
    wallMs: 0,
    memoryUsageBytes: 0,
  };
}
