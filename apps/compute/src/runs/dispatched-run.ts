import type { DispatchedRun } from '@strata/contracts';
import type { JsonObject } from '../json.js';
import { EXECUTION_SOURCES, type ExecutionSource } from './run-status.js';
import type { NewRun } from './runs.repository.js';

/** Sealed parameters above this travel in the run row only (a NATS message is at most 1 MiB by default). */
export const MAX_DISPATCHED_PARAMS = 256 * 1024;

/**
 * The run row an endpoint dispatch carries, so that the worker records it
 * instead of the API before the dispatch. Undefined when it cannot travel in a
 * message: parameters too large, or no saved function version to run.
 */
export function carriedRun(run: NewRun): DispatchedRun | undefined {
  if (!run.dispatch || run.refused || run.rerunOf) return undefined;
  if (run.sealedParams.length > MAX_DISPATCHED_PARAMS || run.functionId === null || run.functionVersion === null) {
    return undefined;
  }
  return {
    jobId: run.jobId,
    functionId: run.functionId,
    functionVersion: run.functionVersion,
    functionCodeHash: run.functionCodeHash,
    triggerId: run.triggerId,
    executionSource: run.executionSource,
    params: run.sealedParams,
    paramsKeyVersion: run.paramsKeyVersion,
    executionContext: run.executionContext,
    limits: run.limits,
    createdBy: run.createdBy,
    queuedAt: run.queuedAt.toISOString(),
    leaseUntil: run.dispatch.leaseUntil.toISOString(),
  };
}

/**
 * The run a dispatch carries, as the worker records it: `running` under the
 * dispatch's `holder` from `startedAt`, until the carried lease ends.
 */
export function dispatchedNewRun(
  runId: string,
  holder: string,
  carried: DispatchedRun,
  startedAt: Date,
): NewRun & { readonly dispatch: NonNullable<NewRun['dispatch']> } {
  return {
    id: runId,
    jobId: carried.jobId,
    functionId: carried.functionId,
    functionVersion: carried.functionVersion,
    functionCodeHash: carried.functionCodeHash,
    code: null,
    triggerId: carried.triggerId,
    executionSource: carried.executionSource as ExecutionSource,
    sealedParams: carried.params,
    paramsKeyVersion: carried.paramsKeyVersion,
    executionContext: carried.executionContext as JsonObject,
    limits: { ...carried.limits },
    createdBy: carried.createdBy,
    queuedAt: new Date(carried.queuedAt),
    dispatch: { holder, leaseUntil: new Date(carried.leaseUntil), startedAt },
  };
}

/** Narrows what a dispatch message says it carries; undefined for anything else. */
export function parseDispatchedRun(value: unknown): DispatchedRun | undefined {
  const r = value as Record<string, unknown> | null | undefined;
  if (typeof r !== 'object' || r === null) return undefined;
  const ok =
    typeof r['jobId'] === 'string' &&
    typeof r['functionId'] === 'string' &&
    Number.isInteger(r['functionVersion']) &&
    typeof r['functionCodeHash'] === 'string' &&
    (r['triggerId'] === null || typeof r['triggerId'] === 'string') &&
    (EXECUTION_SOURCES as readonly unknown[]).includes(r['executionSource']) &&
    typeof r['params'] === 'string' &&
    Number.isInteger(r['paramsKeyVersion']) &&
    isObject(r['executionContext']) &&
    isObject(r['limits']) &&
    Object.values(r['limits']).every((v) => typeof v === 'number') &&
    typeof r['createdBy'] === 'string' &&
    isDate(r['queuedAt']) &&
    isDate(r['leaseUntil']);
  return ok ? (r as unknown as DispatchedRun) : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDate(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}
