import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { FunctionRunStart, FunctionRunStartReply, FunctionRunStatusReply } from '@strata/contracts';
import { issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import {
  afterCompute,
  afterDecision,
  afterDelay,
  beforeStep,
  stepById,
  type ComputeOutcome,
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
  applyStartReply,
  delayStepRow,
  finishRun,
  functionRunOf,
  newStepRow,
  outcomeOfStatus,
  recordComputeOutcome,
  resumeFromDelay,
  scopeOf,
  stepInputOf,
  startingStepRow,
  startRun,
} from './run-progress.js';
import type { RunRow, StepRow } from './run-rows.js';
import { RunsRepository } from './runs.repository.js';

/** Runs one pass advances at most (each in a transaction of its own). */
const RUNS_PER_TICK = 20;

/** Steps one claim executes before the run yields (decisions chain without waiting). */
const STEPS_PER_CLAIM = 50;

/**
 * What a claim needs compute to answer before its run can go on (a compute
 * step's start, or how its function run is doing). It is asked after the
 * claim's transaction has committed, so no run's row stays locked while
 * compute answers; the answer is applied in a transaction of its own.
 */
type Question =
  | { readonly kind: 'start'; readonly rowId: string; readonly request: Omit<FunctionRunStart, 'workspaceSlug'> }
  | { readonly kind: 'status'; readonly functionRunId: string };

type Answer =
  | { readonly kind: 'start'; readonly rowId: string; readonly reply: FunctionRunStartReply }
  | { readonly kind: 'status'; readonly functionRunId: string; readonly reply: FunctionRunStatusReply };

/** A question sent to compute, its answer to come (a wrapper: a promise returned from a transaction would be awaited in it). */
interface Asked {
  readonly answer: Promise<Answer>;
}

/** What is known already when a run is advanced: compute's notice of a step's end, an answer to a question. */
interface Known {
  readonly ended?: StepRunEnded;
  readonly open?: StepRow[];
  readonly answer?: Answer;
}

/** What a step's execution leads to: a transition, waiting for the due time, or a question for compute. */
type StepResult = Transition | 'later' | { readonly ask: Question };

/** Runs of one pass with a question out to compute at once (each asked while the pass claims the next). */
const QUESTIONS_AT_ONCE = 4;

/** How long past compute's timeout a run with a question out stays out of the claims (then asked again). */
const QUESTION_MARGIN_MS = 1000;

/**
 * The embedded engine: every replica claims due runs (FOR UPDATE SKIP LOCKED),
 * one at a time, every ORCHESTRATION_ENGINE_INTERVAL_MS and moves each as far as
 * it can in its claim's transaction, with the interpreter of `@strata/workflow`:
 *
 * - a decision is evaluated and recorded, and the run goes on at once;
 * - a delay records a `waiting` step and makes the run `waiting` until `resumeAt`;
 * - a compute step starts its function run through compute, in two phases:
 *   the claim records the attempt's row (its job id known) and commits, then
 *   compute is asked, then the answer is recorded in a second transaction. No
 *   run's row stays locked while compute answers, and a start asked again
 *   (a crash between the phases) finds the run started first by its job id.
 *   When compute announces that the run ended, the replica that hears it
 *   claims the run at once, and otherwise the run looks in on it every
 *   ORCHESTRATION_POLL_MS. A finished run is read as the step's outcome (retry
 *   after the backoff, go on, fail, or end).
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
   * transaction of its own; what a run then needs from compute is asked after
   * its claim committed, while the pass claims the next run.
   */
  async tick(): Promise<number> {
    let advanced = 0;
    const following = new Set<Promise<void>>();
    while (advanced < RUNS_PER_TICK && !this.stopped) {
      // A replica whose compute does not answer takes no more runs out of the claims than this.
      while (following.size >= QUESTIONS_AT_ONCE) await Promise.race(following);
      const claimed = await this.transactions.run(async (tx) => {
        const [run] = await this.runs.claimDue(tx, this.clock.now(), 1);
        return run ? { run, asked: await this.advanceClaimed(tx, run) } : undefined;
      });
      if (!claimed) break;
      advanced++;
      if (claimed.asked) {
        const followed: Promise<void> = this.follow(claimed.run, claimed.asked).finally(() =>
          following.delete(followed),
        );
        following.add(followed);
      }
    }
    await Promise.all(following);
    return advanced;
  }

  /** A compute step's function run ended: the run goes on now, on the replica that locks it first. */
  private async onStepRunEnded(ended: StepRunEnded): Promise<void> {
    if (this.stopped) return;
    try {
      const advanced = await this.transactions.run(async (tx) => {
        // The workspace compute names for a function run our engine started in it (internal NATS).
        const scope = issueWorkspaceScope(ended.workspaceSlug);
        const run = await this.runs.lockRunning(scope, tx, ended.orchestrationRunId);
        if (!run) return undefined;
        // A statement after the lock: it sees what the claim that started the function run committed.
        const open = await this.runs.openSteps(scope, run.id, tx);
        // Another replica took the run past that step already.
        if (!open.some((s) => isAttemptOf(s, ended))) return undefined;
        return { run, asked: await this.advanceClaimed(tx, run, { ended, open }) };
      });
      if (advanced?.asked) await this.follow(advanced.run, advanced.asked);
    } catch (err) {
      this.logger.warn({ msg: 'run not taken up on its step end; polled instead', err: String(err) });
    }
  }

  /**
   * Asks compute what the run's claim needs, then applies the answer under the
   * run's lock, as long as the run keeps needing answers (a chain of steps).
   * When compute does not answer, the run is due again once its question's
   * time is up. Never rejects.
   */
  private async follow(run: RunRow, first: Asked): Promise<void> {
    // The workspace of a run row this engine claimed.
    const scope = issueWorkspaceScope(run.workspace_slug);
    let asked: Asked | undefined = first;
    try {
      for (let round = 0; asked && round < STEPS_PER_CLAIM && !this.stopped; round++) {
        const answer: Answer = await asked.answer;
        if (await this.recordedAlone(scope, run.id, answer)) return;
        asked = await this.transactions.run(async (tx): Promise<Asked | undefined> => {
          const locked = await this.runs.lockRunning(scope, tx, run.id);
          return locked ? this.advanceClaimed(tx, locked, { answer }) : undefined;
        });
      }
    } catch (err) {
      this.logger.warn({
        msg: 'compute not asked or its answer not recorded; asked again later',
        runId: run.id,
        err: String(err),
      });
    }
  }

  /**
   * The usual answers need no claim: a start that compute made (its run's id
   * on the attempt's row) and a function run still going (looked in on again).
   * Whether the answer was one of them; the others (a refused start, an ended
   * run) move the run, under its lock.
   */
  private async recordedAlone(scope: WorkspaceScope, runId: string, answer: Answer): Promise<boolean> {
    const pollAt = new Date(this.clock.now().getTime() + this.config.ORCHESTRATION_POLL_MS);
    if (answer.kind === 'start') {
      const { reply } = answer;
      if (!reply.started || reply.rateLimited) return false;
      await this.runs.recordStarted(
        scope,
        runId,
        answer.rowId,
        { functionRunId: reply.runId, jobId: reply.jobId },
        pollAt,
      );
      return true;
    }
    if (outcomeOfStatus(answer.reply) !== undefined) return false;
    await this.runs.lookInAt(scope, runId, pollAt);
    return true;
  }

  private async ask(scope: WorkspaceScope, question: Question): Promise<Answer> {
    if (question.kind === 'start') {
      return { kind: 'start', rowId: question.rowId, reply: await this.compute.start(scope, question.request) };
    }
    return {
      kind: 'status',
      functionRunId: question.functionRunId,
      reply: await this.compute.status(scope, question.functionRunId),
    };
  }

  /**
   * Advances a claimed run; compute's answer to what the run needs from it
   * before it can go on, if anything. The question is sent as the claim's last
   * act, before its commit, so that compute's round trip overlaps the commit;
   * its answer is awaited after it. A notice of the function run's end that
   * comes before the commit waits for the run's lock, and then finds the row.
   */
  private async advanceClaimed(tx: Tx, run: RunRow, known?: Known): Promise<Asked | undefined> {
    // The workspace of a run row this engine claimed.
    const scope = issueWorkspaceScope(run.workspace_slug);
    try {
      const question = await this.advance(scope, tx, run, known);
      if (!question) return undefined;
      const asked = this.ask(scope, question);
      // Awaited by the caller once the claim has committed; not an unhandled rejection if the commit fails first.
      asked.catch(() => undefined);
      return { answer: asked };
    } catch (err) {
      // A step that could not be recorded and the like: the run is tried again at its next due time.
      this.logger.warn({ msg: 'run not advanced; it is tried again', runId: run.id, err: String(err) });
      run.due_at = new Date(this.clock.now().getTime() + this.config.ORCHESTRATION_POLL_MS * 10);
      await this.runs.save(scope, tx, run);
      return undefined;
    }
  }

  private async advance(scope: WorkspaceScope, tx: Tx, run: RunRow, known?: Known): Promise<Question | undefined> {
    const steps = await this.runs.versionSteps(scope, run.orchestration_id, run.orchestration_version, tx);
    const now = this.clock.now();
    if (!steps || steps.length === 0) {
      const reason = `Version ${run.orchestration_version} of the orchestration is gone`;
      finishRun(run, { kind: 'fail', reason }, now, this.retentionMs);
      await this.runs.save(scope, tx, run);
      return undefined;
    }
    startRun(run, steps, now);
    const open = known?.open ?? (await this.runs.openSteps(scope, run.id, tx));
    let question: Question | undefined;
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
      const result = await this.execute(scope, tx, run, step, inFlight, known);
      if (result === 'later') break;
      if ('ask' in result) {
        // Out of the claims until compute has answered, or its timeout (and a margin) has passed.
        question = result.ask;
        run.due_at = new Date(now.getTime() + this.config.ORCHESTRATION_COMPUTE_TIMEOUT_MS + QUESTION_MARGIN_MS);
        break;
      }
      if (!this.apply(run, result)) break;
    }
    if (run.status === 'running' && run.current_step_id !== null && run.due_at !== null && run.due_at <= now) {
      run.due_at = now; // more steps to go: the next tick continues
    }
    await this.runs.save(scope, tx, run);
    return question;
  }

  /** Executes (or looks in on) one step; 'later' when the run must wait for its due time. */
  private async execute(
    scope: WorkspaceScope,
    tx: Tx,
    run: RunRow,
    step: Step,
    inFlight: StepRow | undefined,
    known?: Known,
  ): Promise<StepResult> {
    const now = this.clock.now();
    const guard = inFlight ? undefined : beforeStep(run.executed_steps.length);
    if (guard) return guard;
    if (step.type === 'decision') {
      const { result, transition } = afterDecision(step, scopeOf(run));
      const row = newStepRow(run, step, now, {
        status: 'succeeded',
        input: stepInputOf(run) as unknown as JsonValue,
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
    return this.computeStep(scope, tx, run, step, inFlight, known);
  }

  /**
   * A compute step: records a new attempt's row and asks compute to start it;
   * records compute's answer to that start; then reads the function run's end
   * from compute's notice, or asks compute how it is doing.
   */
  private async computeStep(
    scope: WorkspaceScope,
    tx: Tx,
    run: RunRow,
    step: ComputeStep,
    inFlight: StepRow | undefined,
    known?: Known,
  ): Promise<StepResult> {
    const now = this.clock.now();
    if (!inFlight) {
      const row = startingStepRow(run, step, now);
      await this.runs.insertStep(scope, tx, row);
      return { ask: { kind: 'start', rowId: row.id, request: functionRunOf(run, step) } };
    }
    const { ended, answer } = known ?? {};
    let outcome: ComputeOutcome | undefined;
    if (inFlight.function_run_id === null) {
      if (ended && isAttemptOf(inFlight, ended)) {
        // The function run ended before its start's answer was recorded.
        inFlight.function_run_id = ended.functionRunId;
        outcome = outcomeOfStatus(ended.end);
      } else if (answer?.kind === 'start' && answer.rowId === inFlight.id) {
        outcome = applyStartReply(inFlight, answer.reply, now);
      } else {
        // Asked before, and the answer was never recorded (a crash, compute silent): the same job id asks again.
        return { ask: { kind: 'start', rowId: inFlight.id, request: functionRunOf(run, step) } };
      }
    } else if (ended?.functionRunId === inFlight.function_run_id) {
      outcome = outcomeOfStatus(ended.end);
    } else if (answer?.kind === 'status' && answer.functionRunId === inFlight.function_run_id) {
      outcome = outcomeOfStatus(answer.reply);
    } else {
      return { ask: { kind: 'status', functionRunId: inFlight.function_run_id } };
    }
    if (!outcome) {
      await this.runs.saveStep(scope, tx, inFlight);
      run.due_at = new Date(now.getTime() + this.config.ORCHESTRATION_POLL_MS);
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

/** Whether an open step row is the attempt whose function run a notice says ended (by run id, or by job id before the run id is recorded). */
function isAttemptOf(row: StepRow, ended: StepRunEnded): boolean {
  if (row.function_run_id !== null) return row.function_run_id === ended.functionRunId;
  return ended.jobId !== undefined && row.execution_id === ended.jobId;
}
