import { Injectable } from '@nestjs/common';
import { Context } from '@temporalio/activity';
import { issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock } from '@strata/platform';
import {
  stepById,
  type ComputeOutcome,
  type DecisionResult,
  type JsonValue,
  type Step,
  type Transition,
} from '@strata/workflow';
import { ComputeRuns } from '../functions/compute-runs.js';
import { FunctionRunEnds } from '../functions/function-run-ends.js';
import { OrchestrationConfig } from '../orchestration.config.js';
import {
  delayStepRow,
  finishRun,
  functionRunOf,
  isClosed,
  newStepRow,
  outcomeOfStatus,
  recordComputeOutcome,
  resumeFromDelay,
  scopeOf,
  stepInputOf,
  startedStepRow,
  startRun,
} from '../runs/run-progress.js';
import type { RunRow, StepRow } from '../runs/run-rows.js';
import { RunsRepository } from '../runs/runs.repository.js';
import type { RunPlan, RunPorts, RunRef, StepAt } from './run-loop.js';

/** What an activity's effect came to: done, recorded before (an activity run again), or nothing (the run closed). */
type StepEffect<T> =
  { readonly state: 'done'; readonly value: T } | { readonly state: 'recorded' } | { readonly state: 'closed' };

const isOpen = (effect: StepEffect<unknown>): boolean => effect.state !== 'closed';

/** The activities' names, as the workflow proxies them. */
export type RunActivityName = Exclude<keyof RunPorts, 'sleep'>;

/**
 * The Temporal workflow's activities: each records one effect of a run on its
 * rows, in a transaction holding the run's row, with the same helpers as the
 * embedded engine. Each is idempotent (Temporal may run an activity again after
 * it committed): a step is recorded only while the run's executed count is the
 * step's `position`, and a compute attempt's function run is started once and
 * found again by its row. A closed (cancelled) run is never moved.
 */
@Injectable()
export class RunActivities implements Omit<RunPorts, 'sleep'> {
  private readonly retentionMs: number;

  constructor(
    private readonly runs: RunsRepository,
    private readonly functionRuns: ComputeRuns,
    private readonly ends: FunctionRunEnds,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly config: OrchestrationConfig,
  ) {
    this.retentionMs = config.ORCHESTRATION_RUN_RETENTION_DAYS * 86_400_000;
  }

  /** The activities as the worker registers them. */
  bound(): Record<RunActivityName, (...args: never[]) => Promise<unknown>> {
    return {
      begin: this.begin.bind(this),
      decision: this.decision.bind(this),
      delayStarted: this.delayStarted.bind(this),
      delayEnded: this.delayEnded.bind(this),
      compute: this.compute.bind(this),
      finish: this.finish.bind(this),
    };
  }

  async begin(ref: RunRef): Promise<RunPlan | null> {
    return this.withRun(ref, async (scope, tx, run) => {
      const steps = await this.runs.versionSteps(scope, run.orchestration_id, run.orchestration_version, tx);
      const now = this.clock.now();
      if (!steps || steps.length === 0) {
        finishRun(
          run,
          { kind: 'fail', reason: `Version ${run.orchestration_version} of the orchestration is gone` },
          now,
          this.retentionMs,
        );
        await this.runs.save(scope, tx, run);
        return null;
      }
      startRun(run, steps, now);
      await this.runs.save(scope, tx, run);
      return {
        steps,
        stepId: run.current_step_id!,
        attempt: run.current_attempt,
        scope: scopeOf(run),
        executed: run.executed_steps.length,
      };
    });
  }

  async decision(ref: RunRef, at: StepAt, result: DecisionResult): Promise<boolean> {
    return isOpen(
      await this.atStep(ref, at, async (scope, tx, run, step) => {
        const now = this.clock.now();
        await this.runs.insertStep(
          scope,
          tx,
          newStepRow(run, step, now, {
            status: 'succeeded',
            input: stepInputOf(run) as unknown as JsonValue,
            decision_result: result as unknown as JsonValue,
            completed_at: now,
          }),
        );
        run.executed_steps.push(step.id);
      }),
    );
  }

  async delayStarted(ref: RunRef, at: StepAt, delayMs: number): Promise<boolean> {
    return isOpen(
      await this.atStep(ref, at, async (scope, tx, run, step) => {
        if (step.type !== 'delay' || (await this.openRow(scope, tx, run, at))) return; // recorded already
        const now = this.clock.now();
        await this.runs.insertStep(scope, tx, delayStepRow(run, step, now, new Date(now.getTime() + delayMs)));
        run.status = 'waiting';
        run.delay_step_count++;
      }),
    );
  }

  async delayEnded(ref: RunRef, at: StepAt): Promise<boolean> {
    return isOpen(
      await this.atStep(ref, at, async (scope, tx, run) => {
        const row = await this.openRow(scope, tx, run, at);
        if (!row) return;
        resumeFromDelay(run, row, this.clock.now());
        await this.runs.saveStep(scope, tx, row);
      }),
    );
  }

  async compute(ref: RunRef, at: StepAt): Promise<ComputeOutcome | null> {
    const started = await this.startAttempt(ref, at);
    if (started.state === 'closed') return null;
    if (started.state === 'recorded') return this.recordedOutcome(ref, at);
    if ('outcome' in started.value) return started.value.outcome;
    const { functionRunId } = started.value;
    const scope = issueWorkspaceScope(ref.workspace);
    const context = Context.current();
    let outcome: ComputeOutcome | undefined;
    for (;;) {
      outcome = outcomeOfStatus(await this.functionRuns.status(scope, functionRunId));
      if (outcome) break;
      context.heartbeat();
      if (context.cancellationSignal.aborted) return null;
      await this.ends.waitFor(functionRunId, this.config.ORCHESTRATION_POLL_MS, context.cancellationSignal);
    }
    const ended = outcome;
    const recorded = await this.atStep(ref, at, async (s, tx, run) => {
      const row = await this.openRow(s, tx, run, at);
      if (!row) return false;
      recordComputeOutcome(run, row, ended, this.clock.now());
      await this.runs.saveStep(s, tx, row);
      return true;
    });
    if (recorded.state === 'closed') return null;
    return recorded.state === 'done' && recorded.value ? ended : this.recordedOutcome(ref, at);
  }

  async finish(ref: RunRef, transition: Transition): Promise<void> {
    await this.withRun(ref, async (scope, tx, run) => {
      finishRun(run, transition, this.clock.now(), this.retentionMs);
      await this.runs.save(scope, tx, run);
      return null;
    });
  }

  /**
   * Starts the attempt's function run unless its row has one already (the
   * activity tried again); the outcome at once when compute refused to start it.
   */
  private startAttempt(ref: RunRef, at: StepAt) {
    return this.atStep(
      ref,
      at,
      async (scope, tx, run, step): Promise<{ functionRunId: string } | { outcome: ComputeOutcome }> => {
        if (step.type !== 'compute') throw new Error(`Step ${step.id} is not a compute step`);
        const existing = await this.openRow(scope, tx, run, at);
        if (existing?.function_run_id) return { functionRunId: existing.function_run_id };
        run.current_step_id = step.id;
        run.current_attempt = at.attempt;
        const now = this.clock.now();
        const started = await this.functionRuns.start(scope, functionRunOf(run, step));
        const { row, refused } = startedStepRow(run, step, now, started);
        await this.runs.insertStep(scope, tx, row);
        if (!refused) return { functionRunId: row.function_run_id! };
        recordComputeOutcome(run, row, refused, now);
        return { outcome: refused };
      },
    );
  }

  /** The outcome of an attempt recorded before (an activity run again after it committed). */
  private async recordedOutcome(ref: RunRef, at: StepAt): Promise<ComputeOutcome> {
    const scope = issueWorkspaceScope(ref.workspace);
    const row = (await this.runs.steps(scope, ref.runId))
      .filter((s) => s.step_id === at.stepId && s.attempt === at.attempt)
      .at(-1);
    if (row?.status === 'succeeded') return { ok: true, output: row.output };
    return { ok: false, error: row?.error ?? { message: 'The attempt was not recorded', code: 'STEP_LOST' } };
  }

  /** The running or waiting row of this execution of the step. */
  private async openRow(scope: WorkspaceScope, tx: Tx, run: RunRow, at: StepAt): Promise<StepRow | undefined> {
    return (await this.runs.steps(scope, run.id, tx)).find(
      (s) => s.step_id === at.stepId && s.attempt === at.attempt && (s.status === 'running' || s.status === 'waiting'),
    );
  }

  /**
   * Runs `effect` on the run and the step, then saves the run. Nothing is done
   * when the run is closed, or when it has executed more than `at.position`
   * steps: this execution of the step was recorded already.
   */
  private async atStep<T>(
    ref: RunRef,
    at: StepAt,
    effect: (scope: WorkspaceScope, tx: Tx, run: RunRow, step: Step) => Promise<T>,
  ): Promise<StepEffect<T>> {
    const result = await this.withRun(ref, async (scope, tx, run): Promise<StepEffect<T>> => {
      if (run.executed_steps.length > at.position) return { state: 'recorded' };
      const steps = await this.runs.versionSteps(scope, run.orchestration_id, run.orchestration_version, tx);
      const step = steps && stepById(steps, at.stepId);
      if (!step) throw new Error(`Step ${at.stepId} is not in version ${run.orchestration_version}`);
      const value = await effect(scope, tx, run, step);
      await this.runs.save(scope, tx, run);
      return { state: 'done', value };
    });
    return result ?? { state: 'closed' };
  }

  /** `work` on the run's row, locked; null (and nothing done) when the run is gone or closed. */
  private async withRun<T>(
    ref: RunRef,
    work: (scope: WorkspaceScope, tx: Tx, run: RunRow) => Promise<T | null>,
  ): Promise<T | null> {
    // The workspace of a run the Temporal engine started for it.
    const scope = issueWorkspaceScope(ref.workspace);
    return this.transactions.run(async (tx) => {
      const run = await this.runs.find(scope, ref.orchestrationId, ref.runId, tx);
      if (!run || isClosed(run)) return null;
      return work(scope, tx, run);
    });
  }
}
