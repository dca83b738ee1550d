import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { newOrchestrationStepId } from '@strata/crypto';
import { issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import {
  afterCompute,
  afterDecision,
  afterDelay,
  beforeStep,
  computeOutcomeOf,
  DEFAULT_COMPUTE_TIMEOUT_MS,
  stepById,
  type ComputeStep,
  type JsonValue,
  type Step,
  type Transition,
} from '@strata/workflow';
import { ComputeRuns } from '../functions/compute-runs.js';
import { OrchestrationConfig } from '../orchestration.config.js';
import type { RunRow, StepRow } from './run-rows.js';
import { RunsRepository } from './runs.repository.js';

/** Steps one claim executes before the run yields (decisions chain without waiting). */
const STEPS_PER_CLAIM = 50;

/**
 * The embedded engine: every replica claims due runs (FOR UPDATE SKIP LOCKED)
 * every ORCHESTRATION_ENGINE_INTERVAL_MS and moves each as far as it can in the
 * claim's transaction, with the interpreter of `@strata/workflow`:
 *
 * - a decision is evaluated and recorded, and the run goes on at once;
 * - a delay records a `waiting` step and makes the run `waiting` until `resumeAt`;
 * - a compute step starts its function run through compute and the run polls it
 *   every ORCHESTRATION_POLL_MS; a finished run is read as the step's outcome
 *   (retry after the backoff, go on, fail, or end).
 *
 * Everything a run needs to go on is in its rows, so a restart in the middle of
 * a delay or a compute step resumes it without running a completed step again:
 * a started function run is polled, never started twice for one attempt.
 */
@Injectable()
export class RunEngine implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RunEngine');
  private readonly task: PeriodicTask;

  constructor(
    private readonly runs: RunsRepository,
    private readonly compute: ComputeRuns,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly config: OrchestrationConfig,
  ) {
    this.task = new PeriodicTask('RunEngine', config.ORCHESTRATION_ENGINE_INTERVAL_MS, () => this.tick(), this.logger);
  }

  onApplicationBootstrap(): void {
    if (this.config.ORCHESTRATION_ENGINE_ENABLED) this.task.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** A run was created: look for due runs now rather than at the next tick. */
  wake(): void {
    this.task.wake();
  }

  /** One pass: claims up to 20 due runs and advances each. */
  async tick(): Promise<number> {
    return this.transactions.run(async (tx) => {
      const due = await this.runs.claimDue(tx, this.clock.now(), 20);
      for (const run of due) {
        // The workspace of a run row this engine claimed.
        const scope = issueWorkspaceScope(run.workspace_slug);
        try {
          await this.advance(scope, tx, run);
        } catch (err) {
          // Compute unreachable and the like: the run is tried again at its next due time.
          this.logger.warn({ msg: 'run not advanced; it is tried again', runId: run.id, err: String(err) });
          run.due_at = new Date(this.clock.now().getTime() + this.config.ORCHESTRATION_POLL_MS * 10);
          await this.runs.save(scope, tx, run);
        }
      }
      return due.length;
    });
  }

  private async advance(scope: WorkspaceScope, tx: Tx, run: RunRow): Promise<void> {
    const steps = await this.runs.versionSteps(scope, run.orchestration_id, run.orchestration_version, tx);
    if (!steps || steps.length === 0) {
      this.finish(run, { kind: 'fail', reason: `Version ${run.orchestration_version} of the orchestration is gone` });
      await this.runs.save(scope, tx, run);
      return;
    }
    const now = this.clock.now();
    if (run.status === 'pending') {
      run.status = 'running';
      run.started_at = now;
      run.current_step_id = steps[0]!.id;
      run.current_attempt = 1;
    }
    const open = (await this.runs.steps(scope, run.id, tx)).filter(
      (s) => s.status === 'running' || s.status === 'waiting',
    );
    for (let i = 0; i < STEPS_PER_CLAIM && run.current_step_id !== null; i++) {
      const step = stepById(steps, run.current_step_id);
      if (!step) {
        this.finish(run, { kind: 'fail', reason: `Step ${run.current_step_id} does not exist` });
        break;
      }
      const inFlight = open.find((s) => s.step_id === step.id && s.attempt === run.current_attempt);
      const transition = await this.execute(scope, tx, run, step, inFlight);
      if (transition === 'later') break;
      if (!this.apply(run, transition)) break;
    }
    if (run.status === 'running' && run.current_step_id !== null && run.due_at !== null && run.due_at <= now) {
      run.due_at = now; // more steps to go: the next tick continues
    }
    await this.runs.save(scope, tx, run);
  }

  /** Executes (or looks in on) one step; 'later' when the run must wait for its due time. */
  private async execute(
    scope: WorkspaceScope,
    tx: Tx,
    run: RunRow,
    step: Step,
    inFlight: StepRow | undefined,
  ): Promise<Transition | 'later'> {
    const now = this.clock.now();
    const guard = inFlight ? undefined : beforeStep(run.executed_steps.length);
    if (guard) return guard;
    const scopeOfPaths = { input: run.input, context: run.context, steps: run.step_outputs };
    if (step.type === 'decision') {
      const { result, transition } = afterDecision(step, scopeOfPaths);
      await this.runs.insertStep(
        scope,
        tx,
        this.stepRow(run, step, now, {
          status: 'succeeded',
          input: scopeOfPaths,
          decision_result: result as unknown as JsonValue,
          completed_at: now,
        }),
      );
      run.executed_steps.push(step.id);
      return transition;
    }
    if (step.type === 'delay') {
      if (!inFlight) {
        const wait = afterDelay(step);
        const resumeAt = new Date(now.getTime() + (wait.kind === 'wait' ? wait.delayMs : step.delayMs));
        await this.runs.insertStep(
          scope,
          tx,
          this.stepRow(run, step, now, {
            status: 'waiting',
            delay_config: { delayMs: step.delayMs, resumeAt: resumeAt.toISOString(), resumedAt: null },
          }),
        );
        run.status = 'waiting';
        run.delay_step_count++;
        run.due_at = resumeAt;
        return 'later';
      }
      const resumeAt = new Date(inFlight.delay_config!.resumeAt);
      if (resumeAt > now) {
        run.due_at = resumeAt;
        return 'later';
      }
      inFlight.status = 'succeeded';
      inFlight.completed_at = now;
      inFlight.delay_config = { ...inFlight.delay_config!, resumedAt: now.toISOString() };
      await this.runs.saveStep(scope, tx, inFlight);
      run.status = 'running';
      run.executed_steps.push(step.id);
      return { kind: 'go', nextStepId: step.nextStepId ?? null };
    }
    return this.computeStep(scope, tx, run, step, inFlight);
  }

  private async computeStep(
    scope: WorkspaceScope,
    tx: Tx,
    run: RunRow,
    step: ComputeStep,
    inFlight: StepRow | undefined,
  ): Promise<Transition | 'later'> {
    const now = this.clock.now();
    const poll = new Date(now.getTime() + this.config.ORCHESTRATION_POLL_MS);
    if (!inFlight) {
      const input = { input: run.input, context: run.context, steps: run.step_outputs } as unknown as JsonValue;
      const started = await this.compute.start(scope, {
        functionId: step.functionId,
        executionParams: {
          input: run.input,
          context: run.context,
          steps: run.step_outputs,
          orchestration: { runId: run.id, stepId: step.id, attempt: run.current_attempt },
        },
        timeoutMs: step.timeoutMs ?? DEFAULT_COMPUTE_TIMEOUT_MS,
        origin: { orchestrationId: run.orchestration_id, runId: run.id, stepId: step.id, attempt: run.current_attempt },
      });
      const row = this.stepRow(run, step, now, { status: 'running', input, function_id: step.functionId });
      if (!started.started || started.rateLimited) {
        const message = started.started ? 'The workspace reached its function executions limit' : started.reason;
        row.status = 'failed';
        row.error = { message, code: started.started ? 'RATE_LIMITED' : 'FUNCTION_NOT_FOUND' };
        row.completed_at = now;
        if (started.started) {
          row.function_run_id = started.runId;
          row.execution_id = started.jobId;
        }
        await this.runs.insertStep(scope, tx, row);
        run.executed_steps.push(step.id);
        return afterCompute(step, run.current_attempt, { ok: false, error: row.error });
      }
      row.function_run_id = started.runId;
      row.execution_id = started.jobId;
      await this.runs.insertStep(scope, tx, row);
      run.due_at = poll;
      return 'later';
    }
    const status = await this.compute.status(scope, inFlight.function_run_id!);
    if (status.found && ['queued', 'running'].includes(status.status)) {
      run.due_at = poll;
      return 'later';
    }
    const outcome = status.found
      ? computeOutcomeOf({
          status: status.status,
          returnValue: status.returnValue as JsonValue | undefined,
          error: status.error ?? null,
        })
      : ({ ok: false, error: { message: 'The function run is gone', code: 'FUNCTION_RUN_LOST' } } as const);
    inFlight.status = outcome.ok ? 'succeeded' : 'failed';
    inFlight.completed_at = now;
    if (outcome.ok) inFlight.output = outcome.output;
    else inFlight.error = outcome.error;
    await this.runs.saveStep(scope, tx, inFlight);
    run.executed_steps.push(step.id);
    if (outcome.ok) run.step_outputs = { ...run.step_outputs, [step.id]: outcome.output };
    else {
      run.has_errors = true;
      run.errors = [...run.errors, { stepId: step.id, ...outcome.error }];
    }
    return afterCompute(step, run.current_attempt, outcome);
  }

  /** Moves the run by a transition; whether the run can go on in this claim. */
  private apply(run: RunRow, t: Transition): boolean {
    const now = this.clock.now();
    switch (t.kind) {
      case 'go':
        run.current_attempt = 1;
        if (t.nextStepId === null) {
          this.finish(run, t);
          return false;
        }
        run.current_step_id = t.nextStepId;
        return true;
      case 'retry':
        run.current_attempt = t.attempt;
        run.due_at = new Date(now.getTime() + t.delayMs);
        return false;
      case 'wait':
        return false;
      case 'fail':
      case 'end':
        this.finish(run, t);
        return false;
    }
  }

  private finish(run: RunRow, t: Transition): void {
    run.status = t.kind === 'fail' ? 'failed' : 'completed';
    if (t.kind === 'fail') run.failure_reason = t.reason;
    if (t.kind === 'end') run.has_errors = true;
    run.current_step_id = null;
    run.completed_at = this.clock.now();
    run.ttl_expires_at = new Date(
      run.completed_at.getTime() + this.config.ORCHESTRATION_RUN_RETENTION_DAYS * 86_400_000,
    );
    run.due_at = null;
  }

  private stepRow(run: RunRow, step: Step, now: Date, fields: Partial<StepRow>): StepRow {
    return {
      id: newOrchestrationStepId(),
      workspace_slug: run.workspace_slug,
      run_id: run.id,
      step_id: step.id,
      step_type: step.type,
      attempt: run.current_attempt,
      status: 'running',
      input: null,
      output: null,
      decision_result: null,
      delay_config: null,
      error: null,
      function_id: null,
      function_run_id: null,
      execution_id: null,
      started_at: now,
      completed_at: null,
      ...fields,
    };
  }
}
