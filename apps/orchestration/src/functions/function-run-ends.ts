import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { functionRunEndedSubject, type FunctionRunEnded, type FunctionRunStatusReply } from '@strata/contracts';
import { NatsConnectionHolder } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';

/** How many announced function runs a replica remembers. */
const RECENT_ENDS = 10_000;

/** The orchestration run and step a function run was started for (its `origin`). */
export interface StepRunEnded {
  readonly workspaceSlug: string;
  readonly functionRunId: string;
  readonly orchestrationRunId: string;
  /**
   * The function run's job id, which the engine records on the attempt's row
   * before it asks compute to start it: a notice that comes before the engine
   * recorded the run's id is still that attempt's.
   */
  readonly jobId?: string;
  /** How the function run ended (what compute's status answer would say). */
  readonly end: FunctionRunStatusReply;
}

/**
 * Hears compute's notices that a compute step's function run ended and passes
 * them on: to the embedded engine, which takes the run up at once, and to a
 * Temporal activity waiting for that function run. On the embedded engine one
 * replica of a queue group hears each notice (any replica can take the run up);
 * on Temporal every replica hears every notice, since the activity waiting is
 * on one of them. A lost notice costs only latency: engines poll compute too.
 */
@Injectable()
export class FunctionRunEnds implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('FunctionRunEnds');
  private subscription: Subscription | undefined;
  private readonly listeners: ((ended: StepRunEnded) => void)[] = [];
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Function runs announced lately, for a wait that begins after its run's notice (a fast function). */
  private readonly recent = new Set<string>();

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: OrchestrationConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // A replica that executes no runs has nobody to pass a notice to (and must not take one from the group).
    if (!this.config.ORCHESTRATION_ENGINE_ENABLED) return;
    const nc = await this.nats.get();
    const subscription = nc.subscribe(
      functionRunEndedSubject(this.config.NATS_PREFIX),
      this.config.TEMPORAL_ADDRESS ? {} : { queue: `${this.config.NATS_PREFIX}_orchestration_run_ends` },
    );
    this.subscription = subscription;
    void (async () => {
      for await (const msg of subscription) {
        let notice: FunctionRunEnded;
        try {
          notice = msg.json<FunctionRunEnded>();
        } catch {
          continue;
        }
        const orchestrationRunId = notice?.origin?.['runId'];
        if (typeof notice?.runId !== 'string' || typeof orchestrationRunId !== 'string') continue;
        if (typeof notice.end?.status !== 'string') continue;
        this.ended({
          workspaceSlug: notice.workspaceSlug,
          functionRunId: notice.runId,
          orchestrationRunId,
          ...(typeof notice.jobId === 'string' ? { jobId: notice.jobId } : {}),
          end: notice.end,
        });
      }
    })();
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
    for (const waiting of this.waiters.values()) for (const wake of waiting) wake();
    this.waiters.clear();
  }

  /** Calls `listener` on every notice this replica hears. */
  listen(listener: (ended: StepRunEnded) => void): void {
    this.listeners.push(listener);
  }

  /** Resolves when the function run's end is announced or after `ms`, whichever is first (then the caller polls). */
  waitFor(functionRunId: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.recent.has(functionRunId)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.waiters.get(functionRunId) ?? new Set<() => void>();
      this.waiters.set(functionRunId, waiting);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        waiting.delete(done);
        if (waiting.size === 0 && this.waiters.get(functionRunId) === waiting) this.waiters.delete(functionRunId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      waiting.add(done);
    });
  }

  private ended(ended: StepRunEnded): void {
    this.recent.add(ended.functionRunId);
    if (this.recent.size > RECENT_ENDS) this.recent.delete(this.recent.values().next().value!);
    for (const wake of [...(this.waiters.get(ended.functionRunId) ?? [])]) wake();
    for (const listener of this.listeners) {
      try {
        listener(ended);
      } catch (err) {
        this.logger.warn({ msg: 'run end listener failed', err: String(err) });
      }
    }
  }
}
