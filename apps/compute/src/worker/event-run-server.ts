import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Msg, Subscription } from '@nats-io/transport-node';
import {
  computeEventRunQueue,
  computeEventRunSubject,
  type EventRunOffer,
  type EventRunReply,
} from '@strata/contracts';
import { issueWorkspaceScope, type WorkspaceScope } from '@strata/db';
import { extractTraceContext, jsonOf, respondJson } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import type { SandboxEngine } from '@strata/sandbox';
import { context } from '@opentelemetry/api';
import { ComputeConfig } from '../compute.config.js';
import { carriedRun, parseCarriedRun } from '../runs/carried-run.js';
import type { NewRun } from '../runs/runs.repository.js';
import { RunExecutor } from './run-executor.js';
import { SANDBOX_ENGINE } from './sandbox-engine.provider.js';

/** Narrows an offer; undefined for anything else (answered busy: the API queues the run). */
export function parseEventRunOffer(payload: unknown): EventRunOffer | undefined {
  const p = payload as Record<string, unknown> | null;
  if (typeof p !== 'object' || p === null) return undefined;
  const { runId, workspaceSlug, eventId } = p;
  if (typeof runId !== 'string' || typeof workspaceSlug !== 'string' || typeof eventId !== 'string') return undefined;
  const run = parseCarriedRun(p['run']);
  return run?.triggerId ? { runId, workspaceSlug, eventId, run } : undefined;
}

/**
 * Takes event-driven runs straight from their record event: those this
 * worker's own consumer took (`runHere`), and those offered over NATS (a
 * member of the event-run queue group). With a background isolate free, it
 * writes the run as running with its (event, trigger) pair, in one statement,
 * answers `started` and runs it, which spares the run the job queue's hop.
 * Full, it answers `busy` and the consumer queues the run; the pair's unique
 * key lets only one of the two paths start it.
 */
@Injectable()
export class EventRunServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EventRunServer');
  private subscription: Subscription | undefined;
  private closing = false;
  /** Offers taken whose run has not reached the engine yet (their isolates are spoken for). */
  private taking = 0;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly executor: RunExecutor,
    private readonly config: ComputeConfig,
    @Inject(SANDBOX_ENGINE) private readonly engine: SandboxEngine,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    this.subscription = nc.subscribe(computeEventRunSubject(this.config.NATS_PREFIX), {
      queue: computeEventRunQueue(this.config.NATS_PREFIX),
      callback: (err, msg) => {
        if (err) this.logger.warn({ msg: 'event-run subscription error', err: String(err) });
        else this.accept(msg);
      },
    });
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.subscription
      ?.drain()
      .catch((err: unknown) => this.logger.warn({ msg: 'drain failed', err: String(err) }));
    await Promise.all(this.running);
  }

  /** Whether a background isolate is free for one more run, counting the runs waiting for one. */
  private hasRoom(): boolean {
    const { available, queued } = this.engine.stats();
    return available - queued - this.taking > 0;
  }

  /**
   * Runs an event's run this worker's own consumer took, as an offer from the
   * group would run: written with its (event, trigger) pair and started here.
   * Undefined when no background isolate is free (or the run cannot be carried);
   * otherwise whether it is settled: true when this worker started it or the
   * pair had started it already, false when it could not be written (the
   * caller queues it; the pair's key lets only one of the two start it).
   */
  runHere(scope: WorkspaceScope, run: NewRun, eventId: string): Promise<boolean> | undefined {
    const carried = run.refused ? undefined : carriedRun(run);
    if (!carried?.triggerId || this.closing || !this.hasRoom()) return undefined;
    const offer: EventRunOffer = { runId: run.id, workspaceSlug: scope.workspace, eventId, run: carried };
    return new Promise<boolean>((resolve) => this.start(offer, (claimed) => resolve(!(claimed instanceof Error))));
  }

  private accept(msg: Msg): void {
    const offer = parseEventRunOffer(jsonOf(msg));
    if (!offer || this.closing || !this.hasRoom()) {
      reply(msg, { kind: 'busy' });
      return;
    }
    context.with(extractTraceContext(msg.headers), () =>
      this.start(offer, (claimed) =>
        reply(msg, { kind: claimed === true ? 'started' : claimed === false ? 'known' : 'busy' }),
      ),
    );
  }

  /** Takes `offer` (its isolate is spoken for at once); `answer` hears once how its write ended. */
  private start(offer: EventRunOffer, answer: (claimed: boolean | Error) => void): void {
    this.taking++;
    const served = this.serve(offer, answer)
      .catch((err: unknown) => this.logger.error({ msg: 'event run not served', runId: offer.runId, err: String(err) }))
      .finally(() => this.running.delete(served));
    this.running.add(served);
  }

  private async serve(offer: EventRunOffer, answer: (claimed: boolean | Error) => void): Promise<void> {
    let answered = false;
    // Answered as soon as the run is written (or found started, or could not be): it starts right after.
    const once = (claimed: boolean | Error) => {
      if (answered) return;
      answered = true;
      this.taking--;
      if (claimed instanceof Error) {
        this.logger.warn({ msg: 'offered run not written; it is queued', runId: offer.runId, err: String(claimed) });
      }
      answer(claimed);
    };
    try {
      // The workspace of a record event our own consumer took (or our API offered) for a trigger in it.
      const scope = issueWorkspaceScope(offer.workspaceSlug);
      await this.executor.executeOffered(scope, offer.runId, offer.run, offer.eventId, once);
    } finally {
      once(new Error('the offered run was not taken'));
    }
  }
}

function reply(msg: Msg, answer: EventRunReply): void {
  respondJson(msg, answer);
}
