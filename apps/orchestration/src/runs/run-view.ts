import type { RunRow, StepRow } from './run-rows.js';

const iso = (d: Date | null): string | null => (d ? new Date(d).toISOString() : null);

/** A run as the API answers it (every run field of the spec). */
export function runView(r: RunRow) {
  return {
    id: r.id,
    orchestrationId: r.orchestration_id,
    orchestrationVersion: r.orchestration_version,
    workspaceSlug: r.workspace_slug,
    status: r.status,
    currentStepId: r.current_step_id,
    input: r.input,
    context: r.context,
    stepOutputs: r.step_outputs,
    correlationId: r.correlation_id,
    triggerType: r.trigger_type,
    triggerMetadata: r.trigger_metadata,
    hasErrors: r.has_errors,
    delayStepCount: r.delay_step_count,
    failureReason: r.failure_reason,
    executedSteps: r.executed_steps,
    errors: r.errors,
    createdAt: iso(r.created_at),
    startedAt: iso(r.started_at),
    completedAt: iso(r.completed_at),
    ttlExpiresAt: iso(r.ttl_expires_at),
  };
}

/** A run step as the API answers it (every run-step field of the spec). */
export function stepView(s: StepRow) {
  return {
    id: s.id,
    orchestrationRunId: s.run_id,
    stepId: s.step_id,
    stepType: s.step_type,
    attempt: s.attempt,
    status: s.status,
    input: s.input,
    output: s.output,
    decisionResult: s.decision_result,
    delayConfig: s.delay_config,
    error: s.error,
    startedAt: iso(s.started_at),
    completedAt: iso(s.completed_at),
    executionId: s.execution_id,
    functionRunId: s.function_run_id,
    functionId: s.function_id,
  };
}
