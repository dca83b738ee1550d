import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import {
  afterCompute,
  afterDecision,
  afterDelay,
  beforeStep,
  stepById,
  type ComputeStep,
  type JsonValue,
  type Step,
  type Transition,
} from '@strata/workflow';
import { ComputeRuns } from '../functions/compute-runs.js';
import { FunctionRunEnds, type StepRunEnded } from '../functions/function-run-ends.js';
import { OrchestrationConfig } from '../orchestration.config.js';
import { RunEngine } from './run-engine.js';
import {
  delayStepRow,
  finishRun,
  functionRunOf,
  newStepRow,
  outcomeOfStatus,
  recordComputeOutcome,
  resumeFromDelay,
  scopeOf,
  startedStepRow,
  startRun,
} from './run-progress.js';
import type { RunRow, StepRow } from './run-rows.js';
import { RunsRepository } from './runs.repository.js';

/** Runs one pass advances at most (each in a transaction of its own). */
const RUNS_PER_TICK = 20;

/** Steps one claim executes before the run yields (decisions chain without waiting). */
const STEPS_PER_CLAIM = 50;

/**
 * The embedded engine: every replica claims due runs (FOR UPDATE SKIP LOCKED),
 * one at a time, every ORCHESTRATION_ENGINE_INTERVAL_MS and moves each as far as
 * it can in its claim's transaction, with the interpreter of `@strata/workflow`:
 *
 * - a decision is evaluated and recorded, and the run goes on at once;
 * - a delay records a `waiting` step and makes the run `waiting` until `resumeAt`;
 * - a compute step starts its function run through compute; when compute
 *   announces that the run ended, the replica that hears it claims the run at
 *   once, and otherwise the run looks in on it every ORCHESTRATION_POLL_MS. A
 *   finished run is read as the step's outcome (retry after the backoff, go on,
 *   fail, or end).
 *
 * Everything a run needs to go on is in its rows, so a restart in the middle of
 * a delay or a compute step resumes it without running a completed step again:
 * a started function run is polled, never started twice for one attempt.
 */
@Injectable()
export class EmbeddedEngine extends RunEngine implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EmbeddedEngine');
  private readonly task: PeriodicTask;
  private readonly retentionMs: number;
  private stopped = false;

  constructor(
    private readonly runs: RunsRepository,
    private readonly compute: ComputeRuns,
    private readonly ends: FunctionRunEnds,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly config: OrchestrationConfig,
  ) {
    super();
    this.task = new PeriodicTask(
      'EmbeddedEngine',
      config.ORCHESTRATION_ENGINE_INTERVAL_MS,
      () => this.tick(),
      this.logger,
    );
    this.retentionMs = config.ORCHESTRATION_RUN_RETENTION_DAYS * 86_400_000;
  }

  onApplicationBootstrap(): void {
    if (!this.config.ORCHESTRATION_ENGINE_ENABLED) return;
    this.ends.listen((ended) => void this.onStepRunEnded(ended));
    this.task.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.task.stop();
  }

  wake(): void {
    this.task.wake();
  }

  /** A cancelled run is no longer due; a claim in flight sees its new status when it commits. */
  async cancelled(): Promise<void> {}

  /**
   * One pass: advances up to 20 due runs, each claimed and advanced in a
   * transaction of its own. A run's lock is held while its step asks compute,
   * so one run at a time: the other due runs stay free for other replicas, and
   * a run whose transaction fails takes no other run's progress with it.
   */
  async tick(): Promise<number> {
    let advanced = 0;
    while (advanced < RUNS_PER_TICK && !this.stopped) {
      const claimed = await this.transactions.run(async (tx) => {
        const [run] = await this.runs.claimDue(tx, this.clock.now(), 1);
        if (run) await this.advanceClaimed(tx, run);
        return run !== undefined;
      });
      if (!claimed) break;
      advanced++;
    }
    return advanced;
  }

  /** A compute step's function run ended: the run goes on now, on the replica that locks it first. */
  private async onStepRunEnded(ended: StepRunEnded): Promise<void> {
    if (this.stopped) return;
    try {
      await this.transactions.run(async (tx) => {
        // The workspace compute names for a function run our engine started in it (internal NATS).
        const scope = issueWorkspaceScope(ended.workspaceSlug);
        const run = await this.runs.lockRunning(scope, tx, ended.orchestrationRunId);
        if (!run) return;
        // A statement after the lock: it sees what the claim that started the function run committed.
        const open = await this.runs.openSteps(scope, run.id, tx);
        // Another replica took the run past that step already.
        if (!open.some((s) => s.function_run_id === ended.functionRunId)) return;
        await this.advanceClaimed(tx, run, { ended, open });
      });
    } catch (err) {
      this.logger.warn({ msg: 'run not taken up on its step end; polled instead', err: String(err) });
    }
  }

  /**
   * Advances a claimed run. `known`: when compute's notice is why it was
   * claimed, the function run's end and the run's open steps, read already.
   */
  private async advanceClaimed(tx: Tx, run: RunRow, known?: { ended: StepRunEnded; open: StepRow[] }): Promise<void> {
    // The workspace of a run row this engine claimed.
    const scope = issueWorkspaceScope(run.workspace_slug);
    try {
      await this.advance(scope, tx, run, known);
    } catch (err) {
      // Compute unreachable and the like: the run is tried again at its next due time.
      this.logger.warn({ msg: 'run not advanced; it is tried again', runId: run.id, err: String(err) });
      run.due_at = new Date(this.clock.now().getTime() + this.config.ORCHESTRATION_POLL_MS * 10);
      await this.runs.save(scope, tx, run);
    }
  }

  private async advance(
    scope: WorkspaceScope,
    tx: Tx,
    run: RunRow,
    known?: { ended: StepRunEnded; open: StepRow[] },
  ): Promise<void> {
    const steps = await this.runs.versionSteps(scope, run.orchestration_id, run.orchestration_version, tx);
    const now = this.clock.now();
    if (!steps || steps.length === 0) {
      const reason = `Version ${run.orchestration_version} of the orchestration is gone`;
      finishRun(run, { kind: 'fail', reason }, now, this.retentionMs);
      await this.runs.save(scope, tx, run);
      return;
    }
    startRun(run, steps, now);
    const open = known?.open ?? (await this.runs.openSteps(scope, run.id, tx));
    const ended = known?.ended;
    for (let i = 0; i < STEPS_PER_CLAIM && run.current_step_id !== null; i++) {
      const step = stepById(steps, run.current_step_id);
      if (!step) {
        finishRun(run, { kind: 'fail', reason: `Step ${run.current_step_id} does not exist` }, now, this.retentionMs);
        break;
      }
      // Open rows only: a row this claim finished (a loop passing the step again) is not in flight.
      const inFlight = open.find(
        (s) =>
          s.step_id === step.id &&
          s.attempt === run.current_attempt &&
          (s.status === 'running' || s.status === 'waiting'),
      );
      const transition = await this.execute(scope, tx, run, step, inFlight, ended);
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
    ended?: StepRunEnded,
  ): Promise<Transition | 'later'> {
    const now = this.clock.now();
    const guard = inFlight ? undefined : beforeStep(run.executed_steps.length);
    if (guard) return guard;
    if (step.type === 'decision') {
      const { result, transition } = afterDecision(step, scopeOf(run));
      const row = newStepRow(run, step, now, {
        status: 'succeeded',
        input: scopeOf(run) as unknown as JsonValue,
        decision_result: result as unknown as JsonValue,
        completed_at: now,
      });
      await this.runs.insertStep(scope, tx, row);
      run.executed_steps.push(step.id);
      return transition;
    }
    if (step.type === 'delay') {
      if (!inFlight) {
        const wait = afterDelay(step);
        const resumeAt = new Date(now.getTime() + (wait.kind === 'wait' ? wait.delayMs : step.delayMs));
        await this.runs.insertStep(scope, tx, delayStepRow(run, step, now, resumeAt));
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
      resumeFromDelay(run, inFlight, now);
      await this.runs.saveStep(scope, tx, inFlight);
      return { kind: 'go', nextStepId: step.nextStepId ?? null };
    }
    return this.computeStep(scope, tx, run, step, inFlight, ended);
  }

  private async computeStep(
    scope: WorkspaceScope,
    tx: Tx,
    run: RunRow,
    step: ComputeStep,
    inFlight: StepRow | undefined,
    ended?: StepRunEnded,
  ): Promise<Transition | 'later'> {
    const now = this.clock.now();
    const poll = new Date(now.getTime() + this.config.ORCHESTRATION_POLL_MS);
    if (!inFlight) {
      const { row, refused } = startedStepRow(
        run,
        step,
        now,
        await this.compute.start(scope, functionRunOf(run, step)),
      );
      await this.runs.insertStep(scope, tx, row);
      if (!refused) {
        run.due_at = poll;
        return 'later';
      }
      recordComputeOutcome(run, row, refused, now);
      return afterCompute(step, run.current_attempt, refused);
    }
    const functionRunId = inFlight.function_run_id!;
    const outcome = outcomeOfStatus(
      ended?.functionRunId === functionRunId ? ended.end : await this.compute.status(scope, functionRunId),
    );
    if (!outcome) {
      run.due_at = poll;
      return 'later';
    }
    recordComputeOutcome(run, inFlight, outcome, now);
    await this.runs.saveStep(scope, tx, inFlight);
    return afterCompute(step, run.current_attempt, outcome);
  }

  /** Moves the run by a transition; whether the run can go on in this claim. */
  private apply(run: RunRow, t: Transition): boolean {
    const now = this.clock.now();
    switch (t.kind) {
      case 'go':
        run.current_attempt = 1;
        if (t.nextStepId === null) {
          finishRun(run, t, now, this.retentionMs);
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
        finishRun(run, t, now, this.retentionMs);
        return false;
    }
  }
}
