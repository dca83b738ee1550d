/**
 * Where a run is (docs/compute.md, "Run states"):
 *
 *   queued ──claim──▶ running ──▶ succeeded | failed | timed_out
 *     │                  └─ lease expired (worker lost) ──▶ failed
 *     └─ cancel ──▶ cancelled
 *   (none) ──executions limit reached──▶ rate_limited (recorded, never started)
 *
 * `succeeded`, `failed`, `timed_out`, `cancelled` and `rate_limited` are final.
 */
export const RUN_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'timed_out',
  'cancelled',
  'rate_limited',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What started a run (the spec's executionSource). */
export const EXECUTION_SOURCES = ['trigger', 'rerun', 'manual', 'scheduled', 'http-trigger'] as const;
export type ExecutionSource = (typeof EXECUTION_SOURCES)[number];
