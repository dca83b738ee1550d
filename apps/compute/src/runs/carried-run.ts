import type { CarriedRun, DispatchedRun } from '@strata/contracts';
import type { JsonObject } from '../json.js';
import { EXECUTION_SOURCES, type ExecutionSource } from './run-status.js';
import type { HeldRun, NewRun } from './runs.repository.js';

/**
 * Sealed parameters (and a test run's code) above this travel in the run row
 * only (a NATS message is at most 1 MiB by default).
 */
export const MAX_CARRIED_PARAMS = 256 * 1024;

/**
 * The run row a job or a dispatch carries, so that a worker writes it instead
 * of the API before the message, or (a job) starts it without reading it.
 * Undefined when it cannot travel in a message: parameters too large, a
 * refused run or a re-run (whose row is written first), or a test run's own
 * code unless `withCode` (only a job carries code: a dispatch and an event's
 * offer are runs of saved versions).
 */
export function carriedRun(run: NewRun, options: { readonly withCode?: boolean } = {}): CarriedRun | undefined {
  if (run.refused || run.rerunOf) return undefined;
  const size = run.sealedParams.length + (run.code?.length ?? 0);
  if (size > MAX_CARRIED_PARAMS) return undefined;
  const target =
    run.code !== null
      ? options.withCode
        ? { functionId: null, functionVersion: null, code: run.code }
        : undefined
      : run.functionId !== null && run.functionVersion !== null
        ? { functionId: run.functionId, functionVersion: run.functionVersion }
        : undefined;
  if (!target) return undefined;
  return {
    jobId: run.jobId,
    ...target,
    functionCodeHash: run.functionCodeHash,
    triggerId: run.triggerId,
    executionSource: run.executionSource,
    params: run.sealedParams,
    paramsKeyVersion: run.paramsKeyVersion,
    executionContext: run.executionContext,
    limits: run.limits,
    createdBy: run.createdBy,
    queuedAt: run.queuedAt.toISOString(),
  };
}

/** An endpoint run as its dispatch carries it, with the end of its hold; undefined as for `carriedRun`. */
export function dispatchedRun(run: HeldRun): DispatchedRun | undefined {
  const carried = carriedRun(run);
  return carried ? { ...carried, leaseUntil: run.held.until.toISOString() } : undefined;
}

/** The run a job carried, as it was queued (the worker claims it from its row only when it must). */
export function queuedRun(runId: string, carried: CarriedRun): NewRun {
  return {
    id: runId,
    jobId: carried.jobId,
    functionId: carried.functionId,
    functionVersion: carried.functionVersion,
    functionCodeHash: carried.functionCodeHash,
    code: carried.code ?? null,
    triggerId: carried.triggerId,
    executionSource: carried.executionSource as ExecutionSource,
    sealedParams: carried.params,
    paramsKeyVersion: carried.paramsKeyVersion,
    executionContext: carried.executionContext as JsonObject,
    limits: { ...carried.limits },
    createdBy: carried.createdBy,
    queuedAt: new Date(carried.queuedAt),
  };
}

/** The run a message carried, as the worker that takes it writes it: `running`, held as `held` says. */
export function heldRun(runId: string, carried: CarriedRun, held: HeldRun['held']): HeldRun {
  return { ...queuedRun(runId, carried), held };
}

/** Narrows the run a message says it carries; undefined for anything else. */
export function parseCarriedRun(value: unknown): CarriedRun | undefined {
  const r = value as Record<string, unknown> | null | undefined;
  if (typeof r !== 'object' || r === null) return undefined;
  const target =
    (typeof r['functionId'] === 'string' && Number.isInteger(r['functionVersion']) && r['code'] === undefined) ||
    (r['functionId'] === null && r['functionVersion'] === null && typeof r['code'] === 'string');
  const ok =
    target &&
    typeof r['jobId'] === 'string' &&
    typeof r['functionCodeHash'] === 'string' &&
    (r['triggerId'] === null || typeof r['triggerId'] === 'string') &&
    (EXECUTION_SOURCES as readonly unknown[]).includes(r['executionSource']) &&
    typeof r['params'] === 'string' &&
    Number.isInteger(r['paramsKeyVersion']) &&
    isObject(r['executionContext']) &&
    isObject(r['limits']) &&
    Object.values(r['limits']).every((v) => typeof v === 'number') &&
    typeof r['createdBy'] === 'string' &&
    isDate(r['queuedAt']);
  return ok ? (r as unknown as CarriedRun) : undefined;
}

/** `parseCarriedRun` with the end of an endpoint run's hold. */
export function parseDispatchedRun(value: unknown): DispatchedRun | undefined {
  const carried = parseCarriedRun(value);
  const leaseUntil = (value as Record<string, unknown> | undefined)?.['leaseUntil'];
  return carried && isDate(leaseUntil) ? { ...carried, leaseUntil } : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDate(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}
