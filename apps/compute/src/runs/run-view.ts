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

/** A function run as the API answers it; the detail adds logs, API calls, the return value and the error. */
export function runView(r: RunEntity, detail: boolean): Record<string, unknown> {
  const durationMs = r.startedAt && r.finishedAt ? r.finishedAt.getTime() - r.startedAt.getTime() : null;
  return {
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
    ...(detail
      ? {
          storedParameters: { encrypted: true, keyVersion: r.paramsKeyVersion },
          result: parsed(r.returnValue),
          logs: parsed(r.logs) ?? [],
          apiCalls: parsed(r.apiCalls) ?? [],
        }
      : {}),
  };
}
