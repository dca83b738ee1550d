import { describe, expect, it } from '@jest/globals';
import { isUUID } from 'class-validator';
import {
  applyStartReply,
  functionRunOf,
  LEGACY_STEP_OUTPUTS_SUNSET,
  startingStepRow,
  stepAttemptJobId,
} from './run-progress.js';
import type { RunRow } from './run-rows.js';

describe('stepAttemptJobId', () => {
  const run = 'orun_01JX0000000000000000';

  it('is one UUID per run, step, attempt and visit, the same every time it is asked', () => {
    const id = stepAttemptJobId(run, 'charge', 1, 0);
    expect(isUUID(id, 'all')).toBe(true);
    expect(stepAttemptJobId(run, 'charge', 1, 0)).toBe(id);
    const others = [
      stepAttemptJobId(run, 'charge', 2, 0),
      stepAttemptJobId(run, 'refund', 1, 0),
      stepAttemptJobId('orun_01JX0000000000000001', 'charge', 1, 0),
      // A loop's next pass, or a retry of the failed run: a new visit.
      stepAttemptJobId(run, 'charge', 1, 3),
    ];
    expect(new Set([id, ...others]).size).toBe(5);
  });
});

describe("a compute attempt's row before and after compute answers its start", () => {
  const now = new Date('2026-11-26T10:00:00Z');
  const step = { id: 'charge', type: 'compute' as const, functionId: '0b8e2f4c-5a1d-4c3e-9f7a-2d6b8c0e1f3a' };
  const run = {
    id: 'orun_01JX0000000000000000',
    workspace_slug: 'acme',
    orchestration_id: 'orch_01JX0000000000000000',
    current_attempt: 2,
    executed_steps: ['a', 'b'],
    input: { amount: 3 },
    context: {},
    step_outputs: {},
  } as unknown as RunRow;

  it('is running with its job id and no function run until compute answers', () => {
    const row = startingStepRow(run, step, now);
    expect(row).toMatchObject({
      step_id: 'charge',
      attempt: 2,
      status: 'running',
      function_id: step.functionId,
      function_run_id: null,
      execution_id: stepAttemptJobId(run.id, 'charge', 2, 2),
    });
  });

  it('gets the function run of a start, or fails with the reason of a refusal', () => {
    const started = startingStepRow(run, step, now);
    expect(
      applyStartReply(started, { started: true, runId: 'r1', jobId: 'j1', rateLimited: false }, now),
    ).toBeUndefined();
    expect(started).toMatchObject({ status: 'running', function_run_id: 'r1', execution_id: 'j1' });

    const limited = startingStepRow(run, step, now);
    expect(applyStartReply(limited, { started: true, runId: 'r2', jobId: 'j2', rateLimited: true }, now)).toEqual({
      ok: false,
      error: { message: 'The workspace reached its function executions limit', code: 'RATE_LIMITED' },
    });
    expect(limited).toMatchObject({ status: 'failed', function_run_id: 'r2', completed_at: now });

    const gone = startingStepRow(run, step, now);
    expect(applyStartReply(gone, { started: false, reason: 'Function not found.' }, now)).toEqual({
      ok: false,
      error: { message: 'Function not found.', code: 'FUNCTION_NOT_FOUND' },
    });
    const large = startingStepRow(run, step, now);
    expect(applyStartReply(large, { started: false, reason: 'too big', code: 'PARAMETERS_TOO_LARGE' }, now)).toEqual({
      ok: false,
      error: { message: 'too big', code: 'PARAMETERS_TOO_LARGE' },
    });
    expect(large).toMatchObject({ status: 'failed', function_run_id: null, error: { code: 'PARAMETERS_TOO_LARGE' } });
  });
});

describe("what a compute step's function is sent", () => {
  const step = { id: 'notify', type: 'compute' as const, functionId: '0b8e2f4c-5a1d-4c3e-9f7a-2d6b8c0e1f3a' };
  const run = {
    id: 'orun_01JX0000000000000000',
    orchestration_id: 'orch_01JX0000000000000000',
    current_attempt: 1,
    executed_steps: ['charge', 'count'],
    input: { amount: 3 },
    context: { region: 'eu' },
    step_outputs: { charge: { amount: 3 }, count: 7 },
  } as unknown as RunRow;

  it('has the earlier outputs under steps.<id>.output, as the paths name them, with the old form kept until its sunset', () => {
    const start = functionRunOf(run, step);
    expect(start.executionParams).toEqual({
      input: { amount: 3 },
      context: { region: 'eu' },
      steps: { charge: { output: { amount: 3 } }, count: { output: 7 } },
      orchestration: { runId: run.id, stepId: 'notify', attempt: 1 },
    });
    expect(start.legacyStepOutputs).toEqual({ sunset: LEGACY_STEP_OUTPUTS_SUNSET });
    expect(LEGACY_STEP_OUTPUTS_SUNSET).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("records the same on the attempt's row as its input", () => {
    const row = startingStepRow(run, step, new Date('2026-11-29T10:00:00Z'));
    const { orchestration: _, ...sent } = functionRunOf(run, step).executionParams;
    expect(row.input).toEqual(sent);
  });
});
