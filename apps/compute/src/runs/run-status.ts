/**
 * Where a run is (docs/compute.md, "Run states"):
 *
 *   queued ──claim──▶ running ──▶ succeeded | failed | timed_out
 *     │                  └─ lease expired (worker lost) ──▶ failed
 *     └─ cancel ──▶ cancelled
 *
 * `succeeded`, `failed`, `timed_out` and `cancelled` are final.
 */
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const FINAL_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'timed_out', 'cancelled'];

/** What started a run (the spec's executionSource). */
export const EXECUTION_SOURCES = ['trigger', 'rerun', 'manual', 'scheduled', 'http-trigger'] as const;
export type ExecutionSource = (typeof EXECUTION_SOURCES)[number];
