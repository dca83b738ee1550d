import type { JsonObject, JsonValue } from '../http/resource.js';

/** docs/compute.md, "Run states": `succeeded`, `failed`, `timed_out`, `cancelled` and `rate_limited` are final. */
export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out' | 'cancelled' | 'rate_limited';

export interface RunError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
}

export interface FunctionRun {
  readonly id: string;
  readonly jobId: string;
  readonly workspaceSlug: string;
  readonly functionId: string | null;
  readonly functionVersion: number | null;
  readonly functionCodeHash: string;
  readonly triggerId: string | null;
  readonly executionSource: string;
  readonly status: RunStatus;
  readonly executionContext: JsonObject;
  readonly memoryUsageBytes: number | null;
  readonly cpuUsageSeconds: number | null;
  readonly queuedAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly durationMs: number | null;
  readonly error: RunError | null;
  readonly logsTruncated: boolean;
  readonly originalRunId: string | null;
  readonly isRerun: boolean;
  readonly rerunCount: number;
  readonly rerunBy: string | null;
  readonly rerunReason: string | null;
  readonly createdBy: string | null;
}

/** A log line of a run: `at` in ms since the run started. */
export interface FunctionRunLog {
  readonly level: string;
  readonly message: string;
  readonly at: number;
}

/**
 * A run of the list filtered by `jobId` (the spec's "test results"): the row with what the run
 * produced, bounded as in the detail. `result` is null and `logs` empty until the run has ended.
 */
export interface FunctionRunWithOutput extends FunctionRun {
  /** What `run()` returned. */
  readonly result?: JsonValue;
  readonly logs: FunctionRunLog[];
}

/** The detail: the list row with what the run produced. */
export interface FunctionRunDetail extends FunctionRunWithOutput {
  readonly apiCalls: { method: string; startedAtMs: number; durationMs: number; ok: boolean; error?: string }[];
  readonly storedParameters?: { encrypted: true; keyVersion: number };
}

export interface FunctionRunListQuery {
  readonly jobId?: string;
  readonly functionId?: string;
  readonly triggerId?: string;
  readonly status?: RunStatus;
  /** ISO 8601, on the queue time, inclusive. */
  readonly since?: string;
  /** ISO 8601, exclusive. */
  readonly until?: string;
  readonly page?: number;
  readonly limit?: number;
}

export interface FunctionRunList<Run extends FunctionRun = FunctionRun> {
  readonly runs: Run[];
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

export interface RerunInput {
  readonly useLatestCode?: boolean;
  readonly reason?: string;
  readonly overrideParams?: JsonObject;
}

export interface RunDocument {
  readonly id: string;
  readonly runId: string;
  readonly name: string;
  readonly sizeBytes: number;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** In the detail only. */
  readonly content?: JsonValue;
}
