import type { RunEntity } from './run.entity.js';

/** JSON text written by the worker, read back (an unreadable value is shown as null, never thrown). */
function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/**
 * What a run produced for its user: `result` (what `run()` returned) and `logs`, bounded when the
 * worker wrote them (COMPUTE_MAX_OUTPUT_BYTES, COMPUTE_MAX_LOG_BYTES and COMPUTE_MAX_LOG_ENTRIES).
 * The detail answers them, and so does the list filtered by `jobId` (the spec's "test results").
 */
export function runOutputView(r: RunEntity): { result: unknown; logs: unknown } {
  return { result: parsed(r.returnValue), logs: parsed(r.logs) ?? [] };
}

/**
 * A function run as the API answers it. `detail` (one run) adds the stored parameters' key,
 * `result`, `logs` and API calls; `output` (a list row of one job) adds `result` and `logs`.
 */
export function runView(r: RunEntity, shape: 'row' | 'output' | 'detail' = 'row'): Record<string, unknown> {
  const durationMs = r.startedAt && r.finishedAt ? r.finishedAt.getTime() - r.startedAt.getTime() : null;
  const row: Record<string, unknown> = {
    id: r.id,
    jobId: r.jobId,
    workspaceSlug: r.workspaceSlug,
    functionId: r.functionId,
    functionVersion: r.functionVersion,
    functionCodeHash: r.functionCodeHash,
    triggerId: r.triggerId,
    executionSource: r.executionSource,
    status: r.status,
    executionContext: r.executionContext,
    memoryUsageBytes: r.memoryUsageBytes === null ? null : Number(r.memoryUsageBytes),
    cpuUsageSeconds: r.cpuUsageSeconds === null ? null : Number(r.cpuUsageSeconds),
    queuedAt: r.queuedAt.toISOString(),
    startedAt: r.startedAt?.toISOString() ?? null,
    finishedAt: r.finishedAt?.toISOString() ?? null,
    durationMs,
    error: parsed(r.error),
    logsTruncated: r.logsTruncated,
    originalRunId: r.originalRunId,
    isRerun: r.isRerun,
    rerunCount: r.rerunCount,
    rerunBy: r.rerunBy,
    rerunReason: r.rerunReason,
    createdBy: r.createdBy,
  };
  if (shape === 'output') return { ...row, ...runOutputView(r) };
  if (shape === 'row') return row;
  return {
    ...row,
    storedParameters: { encrypted: true, keyVersion: r.paramsKeyVersion },
    ...runOutputView(r),
    apiCalls: parsed(r.apiCalls) ?? [],
  };
}
