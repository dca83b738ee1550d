import type { JsonValue } from '@strata/workflow';

export const RUN_STATUSES = ['pending', 'running', 'waiting', 'completed', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Whether a run in this status has ended (it moves again only when retried). */
export const hasEnded = (status: RunStatus): boolean => status === 'completed' || status === 'failed';

/** The failure reason of a run stopped by a caller (`POST …/cancel`, its orchestration deleted). */
export const cancelledBy = (who: string): string => `Cancelled by ${who}`;
export const wasCancelled = (failureReason: string | null): boolean =>
  failureReason?.startsWith(cancelledBy('')) ?? false;
export type StepStatus = 'pending' | 'running' | 'waiting' | 'succeeded' | 'failed';

/** orchestration.runs, as the engine and the API read and write it. */
export interface RunRow {
  id: string;
  workspace_slug: string;
  orchestration_id: string;
  orchestration_version: number;
  status: RunStatus;
  current_step_id: string | null;
  current_attempt: number;
  input: JsonValue;
  context: JsonValue;
  step_outputs: Record<string, JsonValue>;
  correlation_id: string | null;
  trigger_type: string;
  trigger_metadata: Record<string, JsonValue>;
  has_errors: boolean;
  delay_step_count: number;
  failure_reason: string | null;
  executed_steps: string[];
  errors: { stepId: string; message: string; code: string }[];
  due_at: Date | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  ttl_expires_at: Date | null;
  /** The Temporal workflow executing the run (Temporal engine only). */
  workflow_id: string | null;
}

/** orchestration.run_steps: one row per step execution (each compute attempt its own). */
export interface StepRow {
  id: string;
  workspace_slug: string;
  run_id: string;
  step_id: string;
  step_type: string;
  attempt: number;
  status: StepStatus;
  input: JsonValue | null;
  output: JsonValue | null;
  decision_result: JsonValue | null;
  delay_config: { delayMs: number; resumeAt: string; resumedAt: string | null } | null;
  error: { message: string; code: string; stack?: string } | null;
  function_id: string | null;
  function_run_id: string | null;
  execution_id: string | null;
  started_at: Date;
  completed_at: Date | null;
}
