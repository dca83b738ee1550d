import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { functionRunEndedSubject, type CarriedRun, type FunctionRunEnded } from '@strata/contracts';
import { Clock, keyRingOf, NatsConnectionHolder } from '@strata/platform';
import {
  SandboxBusyError,
  type EndpointResponse,
  type JsonValue,
  type SandboxEngine,
  type SandboxResult,
  type SandboxRunner,
  type SandboxTenant,
} from '@strata/sandbox';
import { ComputeConfig } from '../compute.config.js';
import { ComputeMetrics } from '../metrics/compute-metrics.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { heldRun, queuedRun } from '../runs/carried-run.js';
import type { RunEntity } from '../runs/run.entity.js';
import type { RunLimits } from '../runs/run-limits.js';
import { RunJobs } from '../runs/run-jobs.js';
import { openRunParams, type RunParams } from '../runs/run-params.js';
import { RunsRepository, type HeldRun, type RunOutcome } from '../runs/runs.repository.js';
import { WorkspaceSuspensions, type RunRefusal } from '../suspensions/workspace-suspensions.js';
import { RunApi } from './api/run-api.js';
import type { RunBridge } from './run-bridge.js';
import { secretMasker, secretTexts, type SecretMasker } from './run-masking.js';
import { DeferredClaim, type JobMessage } from './deferred-claim.js';
import { SANDBOX_ENGINE, workspaceIsolates } from './sandbox-engine.provider.js';
import { WorkspaceCreators } from './workspace-creators.js';
import { RunWrites } from './run-writes/run-writes.js';

/** Function versions whose code a worker keeps in memory (oldest first out). */
const CODE_CACHE_SIZE = 256;

/** How often a job whose run waits for an isolate has its ack deadline (10 s) pushed back. */
const JOB_KEEPALIVE_MS = 4000;

/**
 * How long a job handed back by a closed engine waits before it is delivered
 * again: after a lost isolate the engine closes before the job consumer stops,
 * and a job handed back at once could come straight back to this worker.
 */
const HAND_BACK_DELAY_MS = 200;

/** Pushes a held job's ack deadline back; a connection closing meanwhile only ends that (the job comes back). */
function keepAlive(message: JobMessage): void {
  try {
    message.working();
  } catch {
    // closed or draining: nothing to extend
  }
}

/** The worker's own name on the runs it holds. */
export const WORKER_ID = `worker-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** The outcome of a run the platform could not execute (its code or parameters unreadable, the engine closed). */
export function platformFailure(bridge: RunBridge, finishedAt: Date): RunOutcome {
  return {
    status: 'failed',
    logs: '[]',
    logsTruncated: false,
    apiCalls: JSON.stringify(bridge.recorded()),
    returnValue: null,
    error: JSON.stringify({ name: 'PlatformError', message: 'The platform could not execute this run.' }),
    memoryUsageBytes: 0,
    cpuUsageSeconds: 0,
    finishedAt,
  };
}

/** A run of a suspended workspace (docs/compute.md, "Suspended workspaces"): none of its code runs. */
class WorkspaceSuspendedError extends Error {
  override readonly name = 'ExecutionsSuspended';

  constructor(readonly refusal: RunRefusal) {
    super(refusal.message);
  }
}

/** The outcome of a run refused because its workspace is suspended. */
function suspendedOutcome(bridge: RunBridge, refusal: WorkspaceSuspendedError, finishedAt: Date): RunOutcome {
  return {
    ...platformFailure(bridge, finishedAt),
    error: JSON.stringify({ name: refusal.name, message: refusal.message }),
  };
}

/** How `RunExecutor.execute` runs a run, beyond the run itself. */
export interface ExecuteOptions {
  /** The worker's background engine unless told otherwise (an endpoint isolate, a reserved background one). */
  readonly engine?: SandboxRunner;
  /** A dispatched endpoint run executed without a takeover: its outcome is written under the dispatch's hold. */
  readonly holder?: string;
  /** Resolves once the run's row exists (a run the worker records itself); tried again until it does. */
  readonly recorded?: () => Promise<void>;
  /**
   * Told how the run ended as soon as the sandbox is done, before the outcome
   * is written (an endpoint's caller is answered without waiting for the write).
   */
  readonly onEnd?: (executed: ExecutedRun) => void;
  /**
   * Resolves once the run is known to be this worker's (true) or not (false:
   * no user code runs and nothing is written); its code and parameters are
   * read and its sandbox context made meanwhile.
   */
  readonly gate?: Promise<boolean>;
  /** A job of a workspace's backlog: it waits for an isolate behind every other run (docs/compute.md, "Fair share"). */
  readonly background?: boolean;
  /** Told when the run has its isolate, before any of its code runs (`SandboxJob.onStart`). */
  readonly onStart?: () => void;
  /**
   * A queued run claimed once it has its isolate, before any of its code runs
   * (the claim is its gate); its job is acknowledged by the claim, or handed
   * back (nak) when the claim's statement failed.
   */
  readonly claimAtStart?: {
    readonly message: JobMessage;
    /** Told when the engine refused the run before it had an isolate (it is closing): the job goes back. */
    readonly handBack: () => void;
  };
  /**
   * A queued run its job carried, executed before it is claimed: the claim
   * comes before its first platform call or after a while, and its outcome is
   * written as `deferred` stands when it ends (`DeferredClaim`).
   */
  readonly deferred?: {
    readonly claim: DeferredClaim;
    readonly message: JobMessage;
    /** When the run got its isolate (now, until it has one): its `startedAt` once claimed or recorded. */
    readonly startedAt: () => Date;
    /**
     * The name this execution claims the run under: the worker's, with a mark of its own. Two
     * deliveries of one job can reach the same worker (one waited past its ack deadline); only
     * the execution whose claim holds the run may write its outcome.
     */
    readonly holder: string;
    /** Aborted when the claim finds the run not queued any more: the sandbox ends it where it is. */
    readonly stop: AbortSignal;
  };
}

/**
 * `op` at most once successfully: each call answers the first success, or
 * tries again when every attempt so far failed.
 */
function retried(op: () => Promise<void>): () => Promise<void> {
  let last: Promise<void> | undefined;
  return () => {
    last = last ? last.catch(op) : op();
    return last;
  };
}

/** How an executed run ended: what the record says, and the HTTP response of endpoint code. */
export interface ExecutedRun {
  readonly outcome: RunOutcome;
  /** Endpoint code that succeeded: the response it set (or its return value as a 200 body). */
  readonly response?: EndpointResponse;
  /** The run was refused, none of its code run (its workspace or its code suspended): until when, and why. */
  readonly refused?: RunRefusal;
}

/**
 * A run's engine result as the run record stores it, with the values of its
 * encrypted parameters masked (run-masking.ts). Endpoint code's record keeps
 * the response it answered (`{statusCode, headers, body}`) as its return value.
 */
export function outcomeOf(
  result: SandboxResult,
  bridge: RunBridge,
  finishedAt: Date,
  mask: SecretMasker = secretMasker([]),
): RunOutcome {
  const status = result.status === 'succeeded' ? 'succeeded' : result.status === 'timed_out' ? 'timed_out' : 'failed';
  const stored = (value: unknown): string => JSON.stringify(mask.json(value as JsonValue));
  return {
    status,
    logs: JSON.stringify(result.logs.map((entry) => ({ ...entry, message: mask.text(entry.message) }))),
    logsTruncated: result.logsTruncated,
    apiCalls: stored(bridge.recorded()),
    returnValue: result.response
      ? stored(result.response)
      : result.returnValue === undefined
        ? null
        : stored(result.returnValue),
    error: result.error
      ? stored({
          ...result.error,
          ...(result.status === 'memory_exceeded' ? { name: 'MemoryLimitExceeded' } : {}),
        })
      : null,
    memoryUsageBytes: Math.max(0, Math.round(result.memoryUsageBytes)),
    cpuUsageSeconds: result.cpuMs / 1000,
    finishedAt,
  };
}

/** What a run's outcome masks: the values of the trigger parameters stored encrypted. */
function maskerOf(params: RunParams): SecretMasker {
  const names = params.secretParams ?? [];
  const given = params.triggerParams;
  if (names.length === 0 || typeof given !== 'object' || given === null || Array.isArray(given)) {
    return secretMasker([]);
  }
  const values = names
    .filter((name) => Object.hasOwn(given, name))
    .map((name) => (given as Record<string, unknown>)[name]);
  return secretMasker(secretTexts(values));
}

/**
 * Executes one claimed run in the sandbox: reads its code (the function version
 * it names, or a test run's own code) and parameters, renews its lease while it
 * runs, and writes how it ended. Any failure of the platform itself (not of the
 * user's code) fails the run with that reason rather than leaving it running.
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger('RunExecutor');
  private readonly ring: KeyRing;
  private readonly codes = new Map<string, string>();
  /** Background isolates one workspace's runs may hold at once (COMPUTE_WORKSPACE_ISOLATES). */
  private readonly workspaceIsolates: number;

  constructor(
    private readonly runs: RunsRepository,
    private readonly functions: FunctionsRepository,
    private readonly api: RunApi,
    @Inject(SANDBOX_ENGINE) private readonly engine: SandboxEngine,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
    private readonly nats: NatsConnectionHolder,
    private readonly jobs: RunJobs,
    private readonly suspensions: WorkspaceSuspensions,
    private readonly metrics: ComputeMetrics,
    private readonly creators: WorkspaceCreators,
    private readonly writes: RunWrites,
  ) {
    this.ring = keyRingOf(config);
    this.workspaceIsolates = workspaceIsolates(config, config.COMPUTE_WORKER_ISOLATES);
  }

  /**
   * Whose run it is for the engine's cap of isolates held at once: all but one
   * (COMPUTE_WORKSPACE_ISOLATES), one while the workspace or its creator is on
   * probation. Read each time the engine hands out an isolate, so runs that
   * were already waiting when a loss put the workspace on probation wait too.
   */
  private tenantOf(workspace: string, creator: string | undefined): SandboxTenant {
    const { suspensions, workspaceIsolates } = this;
    return {
      key: workspace,
      get maxRuns() {
        return suspensions.onProbation(workspace, creator) ? 1 : workspaceIsolates;
      },
    };
  }

  /**
   * Executes a queued run whose job did not carry it, or came again (it may
   * have executed before, on a worker that died): the row is read now, and the
   * run is claimed once it has its isolate, before any of its code runs. A run
   * waiting for an isolate stays `queued` (deleting its function cancels it).
   * The job is acknowledged by the claim (taken or refused), or handed back
   * when the run never got an isolate (the worker stops) or the row could not
   * be read or claimed.
   */
  async executeClaimedAtStart(
    scope: WorkspaceScope,
    runId: string,
    message: JobMessage,
    options: { readonly background?: boolean } = {},
  ): Promise<void> {
    let run: RunEntity | undefined;
    try {
      run = await this.runs.find(scope, runId);
    } catch (err) {
      this.logger.warn({ msg: 'run not read; the job is redelivered', runId, err: String(err) });
      message.nak(1000);
      return;
    }
    if (run?.status !== 'queued') {
      // Taken by another worker, finished, or cancelled: nothing to run.
      message.ack();
      return;
    }
    let started = false;
    let handedBack = false;
    const waiting = setInterval(() => keepAlive(message), JOB_KEEPALIVE_MS);
    try {
      await this.execute(scope, run, {
        claimAtStart: {
          message,
          // No isolate took it before the engine closed (the worker stops): the job goes back as it is.
          handBack: () => {
            handedBack = true;
          },
        },
        ...(options.background ? { background: true } : {}),
        onStart: () => {
          started = true;
          clearInterval(waiting);
          keepAlive(message); // the claim comes next: a full ack deadline for it
        },
      });
    } finally {
      clearInterval(waiting);
    }
    if (!started && handedBack) message.nak(HAND_BACK_DELAY_MS);
  }

  /** The claim of a run that has its isolate now; whether it is this worker's. It settles the run's job. */
  private async claimAtStart(scope: WorkspaceScope, runId: string, message: JobMessage): Promise<boolean> {
    const now = this.clock.now();
    try {
      const claimed = await this.runs.take(scope, runId, WORKER_ID, now, this.leaseFrom(now));
      message.ack();
      return claimed;
    } catch (err) {
      this.logger.warn({ msg: 'run not claimed; the job is redelivered', runId, err: String(err) });
      message.nak(1000);
      return false;
    }
  }

  /**
   * Executes a queued run its job carried, without reading or claiming it
   * first (`DeferredClaim`): the job is acknowledged once the run is claimed
   * or recorded, and handed back when neither happened (the stream delivers
   * it again).
   */
  async executeQueued(
    scope: WorkspaceScope,
    runId: string,
    carried: CarriedRun,
    message: JobMessage,
    options: { readonly background?: boolean } = {},
  ): Promise<void> {
    const holder = `${WORKER_ID}/${randomBytes(4).toString('hex')}`;
    let lease: NodeJS.Timeout | undefined;
    let startedAt: Date | undefined;
    const started = () => startedAt ?? this.clock.now();
    const stop = new AbortController();
    // Waiting for an isolate, the run stays queued and its job unacknowledged: the job's ack deadline
    // is pushed back meanwhile, so the stream does not hand it to another worker too.
    const waiting = setInterval(() => keepAlive(message), JOB_KEEPALIVE_MS);
    const claim = new DeferredClaim({
      take: () => this.runs.take(scope, runId, holder, started(), this.leaseFrom(this.clock.now())),
      afterMs: this.config.COMPUTE_CLAIM_AFTER_MS,
      onClaimed: () => {
        message.ack();
        lease = this.renewLease(scope, runId, holder);
      },
      // Cancelled, or another worker's: it must not keep an isolate (a deleted function's loop, say).
      onLost: () => stop.abort(),
    });
    try {
      await this.execute(scope, this.runs.entityOf(scope, queuedRun(runId, carried)), {
        deferred: { claim, message, startedAt: started, holder, stop: stop.signal },
        ...(options.background ? { background: true } : {}),
        onStart: () => {
          startedAt = this.clock.now();
          clearInterval(waiting);
          keepAlive(message); // the claim comes within COMPUTE_CLAIM_AFTER_MS: a full ack deadline for it
          claim.start();
        },
      });
    } finally {
      clearInterval(waiting);
      clearInterval(lease);
    }
  }

  /**
   * Runs an event's run offered straight to this worker: the run and its
   * (event, trigger) pair are written, held by this worker, while its code and
   * parameters are made ready, and the function starts once they are written.
   * `onClaim` hears how the write ended: true (the run is this worker's), false
   * (the pair started its run before: nothing runs), or the error.
   */
  async executeOffered(
    scope: WorkspaceScope,
    runId: string,
    offered: CarriedRun,
    eventId: string,
    onClaim: (claimed: boolean | Error) => void,
  ): Promise<void> {
    if (offered.triggerId === null) throw new Error(`offered run ${runId} names no trigger`);
    const now = this.clock.now();
    const run = heldRun(runId, offered, { by: WORKER_ID, until: this.leaseFrom(now), startedAt: now });
    const gate = this.runs.insertForEvent(scope, run, { eventId, triggerId: offered.triggerId, at: now }).then(
      (written) => {
        onClaim(written !== undefined);
        return written !== undefined;
      },
      (err: unknown) => {
        onClaim(err instanceof Error ? err : new Error(String(err)));
        return false;
      },
    );
    await this.execute(scope, this.runs.entityOf(scope, run), { gate });
  }

  /** Takes over an endpoint run its API dispatched (held under `dispatchId`); undefined when that hold is gone. */
  claimDispatched(scope: WorkspaceScope, runId: string, dispatchId: string): Promise<RunEntity | undefined> {
    const now = this.clock.now();
    return this.runs.claimDispatched(scope, runId, dispatchId, WORKER_ID, now, this.leaseFrom(now));
  }

  /**
   * Executes an endpoint run its dispatch carried whole (held by the dispatch):
   * the run is recorded, `running` under the dispatch's hold, while the sandbox
   * starts; `onEnd` hears how it ended once the record exists, and the outcome
   * is written after. A record that failed is tried again with the outcome.
   */
  executeCarried(
    scope: WorkspaceScope,
    run: HeldRun,
    engine: SandboxRunner,
    onEnd: (executed: ExecutedRun) => void,
  ): Promise<ExecutedRun | undefined> {
    const recorded = retried(async () => {
      await this.runs.insertIfAbsent(scope, run);
    });
    // Written once the sandbox has its work: the write then overlaps the run instead of preceding it.
    setImmediate(() => {
      recorded().catch((err: unknown) =>
        this.logger.warn({
          msg: 'endpoint run not recorded; tried again with its outcome',
          runId: run.id,
          err: String(err),
        }),
      );
    });
    return this.execute(scope, this.runs.entityOf(scope, run), {
      engine,
      holder: run.held.by,
      recorded,
      onEnd,
    });
  }

  /**
   * Runs a claimed run (on the worker's background engine unless told
   * otherwise) and records how it ended. Never rejects: whatever fails is
   * logged, and a run whose end could not be written is left to its lease (the
   * sweep fails it as WorkerLost).
   */
  async execute(scope: WorkspaceScope, run: RunEntity, options: ExecuteOptions = {}): Promise<ExecutedRun | undefined> {
    const { engine = this.engine, holder, recorded, onEnd, deferred, background, claimAtStart } = options;
    // Claimed at start: the claim, made once the run has its isolate, is the run's gate.
    let claimed: Promise<boolean> | undefined;
    let openGate: ((claim: Promise<boolean>) => void) | undefined;
    const gate = options.gate ?? (claimAtStart ? new Promise<boolean>((resolve) => (openGate = resolve)) : undefined);
    let leaseRenewal: NodeJS.Timeout | undefined;
    const claimNow = (): Promise<boolean> => {
      claimed ??= this.claimAtStart(scope, run.id, claimAtStart!.message).then((ours) => {
        if (ours) leaseRenewal = this.renewLease(scope, run.id);
        return ours;
      });
      return claimed;
    };
    // Suspended while the run waited for its isolate: none of its code runs (`stop` before user code).
    const refusal = new AbortController();
    let refusedAtStart: RunRefusal | undefined;
    let startedAt: Date | undefined;
    /** Who created the workspace: its losses count against them too (docs/compute.md, "Suspended workspaces"). */
    let creator: string | undefined;
    /** Opens the admission gate of a run on probation (below), once onStart has decided. */
    let admit: ((open: boolean) => void) | undefined;
    const onStart = () => {
      startedAt = this.clock.now();
      refusedAtStart = this.suspensions.refusal(scope.workspace, run.functionCodeHash, creator);
      if (refusedAtStart) refusal.abort();
      admit?.(refusedAtStart === undefined);
      options.onStart?.();
      if (claimAtStart && openGate) openGate(claimNow());
    };
    /** Whether the run became this worker's (one to be claimed at start: only by its claim). */
    const ours = async (): Promise<boolean> => (claimAtStart ? ((await claimed) ?? false) : gate ? gate : true);
    // A dispatched run's lease already covers its timeout and the grace; a deferred one is renewed once claimed.
    const heartbeat = holder !== undefined || deferred || claimAtStart ? undefined : this.renewLease(scope, run.id);
    const bridge = this.api.bridgeFor(scope, run, deferred ? () => deferred.claim.required() : undefined);
    try {
      let executed: ExecutedRun;
      try {
        creator = await this.creators.creatorOf(scope);
        const refused = this.suspensions.refusal(scope.workspace, run.functionCodeHash, creator);
        if (refused) throw new WorkspaceSuspendedError(refused);
        const code = await this.codeOf(scope, run);
        const params = openRunParams(this.ring, run.id, run.params);
        // After a loss, the start waits for onStart's word: a sandbox process reports a start after the
        // fact, so a refusal decided there must hold the code back (a gate), not stop it once it runs.
        const admission = this.suspensions.onProbation(scope.workspace, creator)
          ? new Promise<boolean>((resolve) => (admit = resolve))
          : undefined;
        const gated = gate && admission ? Promise.all([gate, admission]).then(([a, b]) => a && b) : (gate ?? admission);
        const result = await engine.run(
          {
            kind: params.request ? 'endpoint' : 'run',
            code,
            triggerParams: (params.triggerParams ?? {}) as JsonValue,
            executionParams: (params.executionParams ?? {}) as JsonValue,
            ...(params.request ? { request: params.request } : {}),
            ...(params.legacyStepOutputs && !params.request ? { legacyStepOutputs: params.legacyStepOutputs } : {}),
            limits: run.limits as unknown as RunLimits,
            // The context is made while the gate settles; no user code runs before.
            ...(gated ? { gate: gated } : {}),
            stop: deferred ? AbortSignal.any([deferred.stop, refusal.signal]) : refusal.signal,
            ...(background ? { background: true } : {}),
            // One workspace never holds every isolate; after a loss, one at a time.
            tenant: this.tenantOf(scope.workspace, creator),
            onStart,
            // A loss (now or after the run ended) counts against the workspace: it restarts a shared worker.
            onIsolateLost: () => this.suspensions.recordLoss(scope.workspace, run.functionCodeHash, creator),
          },
          bridge,
        );
        if (gate && !(await ours())) return undefined;
        if (refusedAtStart && result.error?.name === 'NotStarted') throw new WorkspaceSuspendedError(refusedAtStart);
        const outcome = outcomeOf(result, bridge, this.clock.now(), maskerOf(params));
        executed = result.response ? { outcome, response: result.response } : { outcome };
      } catch (err) {
        if (claimAtStart && !claimed) {
          if (err instanceof SandboxBusyError) {
            claimAtStart.handBack();
            return undefined;
          }
          // Failed before it had an isolate (its code or parameters could not be read): claimed now and
          // failed as the platform's, rather than handed back to fail again on every delivery.
          await claimNow();
        }
        // A run that never became this worker's has nothing to record.
        if (gate && !(await ours())) return undefined;
        // No isolate took it before the engine closed (the worker stops): it goes back to the queue.
        if (err instanceof SandboxBusyError && holder === undefined) {
          const state = deferred && (await deferred.claim.end());
          if (deferred && state !== 'claimed') {
            // Not queued any more: nobody is to run it. Never claimed: the job itself goes back, to any worker.
            if (state === 'lost') deferred.message.ack();
            else deferred.message.nak(HAND_BACK_DELAY_MS);
            return undefined;
          }
          await this.handBack(scope, run.id, deferred?.holder ?? WORKER_ID);
          return undefined;
        }
        if (err instanceof WorkspaceSuspendedError) {
          executed = { outcome: suspendedOutcome(bridge, err, this.clock.now()), refused: err.refusal };
        } else {
          this.logger.error({ msg: 'run could not be executed', runId: run.id, err: String(err) });
          executed = { outcome: platformFailure(bridge, this.clock.now()) };
        }
      }
      if (onEnd) {
        // The caller learns the run's id from its answer: the run exists by then.
        await recorded?.().catch(() => undefined);
        onEnd(executed);
      }
      const ended = () => this.metrics.runEnded({ ...run, ...executed.outcome, startedAt });
      if (deferred) {
        if (!(await this.finishDeferred(scope, run, executed.outcome, deferred))) return undefined;
        ended();
        return executed;
      }
      if (await this.finish(scope, run.id, executed.outcome, holder ?? WORKER_ID, recorded)) {
        this.announceEnd(scope, run, executed.outcome);
        ended();
      }
      return executed;
    } finally {
      if (heartbeat) clearInterval(heartbeat);
      clearInterval(leaseRenewal);
    }
  }

  /**
   * Puts a run this worker claimed but never started back in the queue, with a
   * job for any worker (the stream would drop the run's first job id as a
   * duplicate). A failure is left to the run's lease: the sweep fails it as WorkerLost.
   */
  private async handBack(scope: WorkspaceScope, runId: string, holder: string): Promise<void> {
    try {
      if (!(await this.runs.handBack(scope, runId, holder))) return;
      await this.jobs.publish(scope, { runId, workspaceSlug: scope.workspace }, `${runId}:handed-back:${WORKER_ID}`);
      this.logger.log({ msg: 'run handed back to the queue: the worker stops before it started', runId });
    } catch (err) {
      this.logger.warn({ msg: 'run not handed back; its lease will expire', runId, err: String(err) });
    }
  }

  /** Writes the outcome, trying again twice over about a second and a half when the database fails; whether it was. */
  private async finish(
    scope: WorkspaceScope,
    runId: string,
    outcome: RunOutcome,
    holder: string,
    recorded: (() => Promise<void>) | undefined,
  ): Promise<boolean> {
    const written = await this.retried(runId, async () => {
      await recorded?.();
      return this.writes.finish(scope, { id: runId, holder, outcome });
    });
    if (written === undefined) {
      this.logger.error({ msg: 'run outcome lost; its lease will expire and the sweep fail it', runId });
    }
    return written === true;
  }

  /**
   * Records how a run executed before its claim ended, as its claim stands: a
   * claimed run like any other; one never claimed with its claim, in one
   * statement, if it is still queued; nothing when it was not this worker's
   * (cancelled, or taken by another worker after its job came back). Whether
   * the outcome was written. Its job is acknowledged unless the write failed:
   * then it comes back and the run executes again (it has done nothing but compute).
   */
  private async finishDeferred(
    scope: WorkspaceScope,
    run: RunEntity,
    outcome: RunOutcome,
    deferred: NonNullable<ExecuteOptions['deferred']>,
  ): Promise<boolean> {
    const state = await deferred.claim.end();
    if (state === 'claimed') {
      const written = await this.finish(scope, run.id, outcome, deferred.holder, undefined);
      if (written) this.announceEnd(scope, run, outcome);
      return written;
    }
    if (state === 'lost') {
      deferred.message.ack();
      return false;
    }
    // A run refused before it had an isolate (its workspace suspended) has no start of its own:
    // it started when it ended, never after.
    const startedAt = deferred.startedAt();
    const started = startedAt > outcome.finishedAt ? outcome.finishedAt : startedAt;
    // Acknowledged as soon as the statement answered, with the other runs of its batch (one write to NATS).
    const write = { id: run.id, holder: deferred.holder, queued: { startedAt: started }, outcome };
    const written = await this.retried(run.id, () => this.writes.finish(scope, write, () => deferred.message.ack()));
    if (written === undefined) {
      this.logger.error({
        msg: 'run outcome not written; its job comes back and the run executes again',
        runId: run.id,
      });
      deferred.message.nak(1000);
      return false;
    }
    deferred.message.ack();
    if (written) this.announceEnd(scope, run, outcome);
    return written;
  }

  /** `write` tried three times over about a second and a half while the database fails; undefined when it never answered. */
  private async retried(runId: string, write: () => Promise<boolean>): Promise<boolean | undefined> {
    for (const delayMs of [0, 300, 1200]) {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        return await write();
      } catch (err) {
        this.logger.warn({ msg: 'run outcome not written', runId, err: String(err) });
      }
    }
    return undefined;
  }

  /** Renews the lease of a run this worker holds every third of `COMPUTE_LEASE_MS`, until the timer is cleared. */
  private renewLease(scope: WorkspaceScope, runId: string, holder: string = WORKER_ID): NodeJS.Timeout {
    return setInterval(
      () => {
        this.runs
          .extendLease(scope, runId, holder, this.leaseFrom(this.clock.now()))
          .catch((err: unknown) => this.logger.warn({ msg: 'lease not renewed', runId, err: String(err) }));
      },
      Math.max(250, Math.floor(this.config.COMPUTE_LEASE_MS / 3)),
    );
  }

  /**
   * Tells the orchestration service that a compute step's run ended, so the
   * step goes on without waiting for its next poll. Best effort: the poll
   * makes up for a notice that is lost.
   */
  private announceEnd(scope: WorkspaceScope, run: RunEntity, outcome: RunOutcome): void {
    const origin = run.executionContext['orchestration'];
    if (typeof origin !== 'object' || origin === null || Array.isArray(origin)) return;
    const notice: FunctionRunEnded = {
      workspaceSlug: scope.workspace,
      runId: run.id,
      jobId: run.jobId,
      origin,
      end: {
        found: true,
        status: outcome.status,
        ...(outcome.returnValue !== null ? { returnValue: JSON.parse(outcome.returnValue) as unknown } : {}),
        ...(outcome.error !== null ? { error: JSON.parse(outcome.error) as { name?: string; message?: string } } : {}),
      },
    };
    this.nats
      .get()
      .then((nc) => nc.publish(functionRunEndedSubject(this.config.NATS_PREFIX), JSON.stringify(notice)))
      .catch((err: unknown) => {
        this.logger.warn({ msg: 'run end not announced; the orchestration polls it', runId: run.id, err: String(err) });
      });
  }

  private leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.config.COMPUTE_LEASE_MS);
  }

  /** A version's code never changes: kept for the next run of the same version (at most CODE_CACHE_SIZE). */
  private async codeOf(scope: WorkspaceScope, run: RunEntity): Promise<string> {
    if (run.code !== null) return run.code;
    const key = `${scope.workspace}/${run.functionId}@${run.functionVersion}`;
    const cached = this.codes.get(key);
    if (cached !== undefined) return cached;
    const version = await this.functions.version(scope, run.functionId!, run.functionVersion!);
    if (!version) throw new Error(`function version ${run.functionId}@${run.functionVersion} is missing`);
    if (this.codes.size >= CODE_CACHE_SIZE) this.codes.delete(this.codes.keys().next().value!);
    this.codes.set(key, version.code);
    return version.code;
  }
}
