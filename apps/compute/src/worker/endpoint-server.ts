import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  computeEndpointQueue,
  computeEndpointSubject,
  type EndpointDispatch,
  type EndpointReply,
} from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { extractTraceContext, jsonOf, respondJson } from '@strata/events';
import { Clock, NatsConnectionHolder } from '@strata/platform';
import type { SandboxEngine } from '@strata/sandbox';
import { context } from '@opentelemetry/api';
import { ComputeConfig } from '../compute.config.js';
import { heldRun, parseDispatchedRun } from '../runs/carried-run.js';
import { RunExecutor, type ExecutedRun } from './run-executor.js';
import { ENDPOINT_SANDBOX_ENGINE, SANDBOX_ENGINE } from './sandbox-engine.provider.js';

/** Narrows a dispatch message; anything else is answered `lost`. */
export function parseEndpointDispatch(payload: unknown): EndpointDispatch | undefined {
  const p = payload as Record<string, unknown> | null;
  if (typeof p !== 'object' || p === null) return undefined;
  const { runId, workspaceSlug, holder } = p;
  if (typeof runId !== 'string' || typeof workspaceSlug !== 'string' || typeof holder !== 'string') return undefined;
  if (p['run'] === undefined) return { runId, workspaceSlug, holder };
  const run = parseDispatchedRun(p['run']);
  return run ? { runId, workspaceSlug, holder, run } : undefined;
}

/**
 * Serves endpoint runs: a member of the endpoint queue group while it has an
 * endpoint isolate free, out of it (the subscription drained) while they are
 * all busy, so NATS hands calls to workers that can start them now. A call
 * that reaches it full anyway takes a free background isolate or is answered
 * `busy`. The answer is sent as soon as the function is done, and its outcome
 * written right after: a worker that dies between the two leaves the run to its
 * lease (the sweep fails it as WorkerLost), though its caller was answered.
 */
@Injectable()
export class EndpointServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EndpointServer');
  private nc: NatsConnection | undefined;
  private subscription: Subscription | undefined;
  private inFlight = 0;
  private closing = false;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly executor: RunExecutor,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
    @Inject(ENDPOINT_SANDBOX_ENGINE) private readonly endpointEngine: SandboxEngine,
    @Inject(SANDBOX_ENGINE) private readonly backgroundEngine: SandboxEngine,
  ) {}

  /** Joins the queue group before the worker says it is ready (the subscription is flushed to the server). */
  async onApplicationBootstrap(): Promise<void> {
    this.nc = await this.nats.get();
    this.join();
    await this.nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.leave();
    await Promise.all(this.running);
  }

  private get capacity(): number {
    return this.config.COMPUTE_WORKER_ENDPOINT_ISOLATES;
  }

  /**
   * Joins the queue group (synchronously: the SUB is queued on the connection
   * before anything sent after it, such as the answer that freed the isolate, so
   * a caller answered by this worker finds it in the group again).
   */
  private join(): void {
    if (!this.nc || this.closing || this.subscription || this.inFlight >= this.capacity) return;
    this.subscription = this.nc.subscribe(computeEndpointSubject(this.config.NATS_PREFIX), {
      queue: computeEndpointQueue(this.config.NATS_PREFIX),
      callback: (err, msg) => {
        if (err) this.logger.warn({ msg: 'endpoint subscription error', err: String(err) });
        else this.accept(msg);
      },
    });
  }

  /** Stops taking calls; those already delivered to this process are still answered (drain). */
  private async leave(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.drain().catch((err: unknown) => this.logger.warn({ msg: 'drain failed', err: String(err) }));
  }

  private accept(msg: Msg): void {
    const dispatch = parseEndpointDispatch(jsonOf(msg));
    if (!dispatch) {
      reply(msg, { kind: 'lost' });
      return;
    }
    let engine: SandboxEngine | undefined;
    if (!this.closing && this.inFlight < this.capacity) engine = this.endpointEngine;
    else if (!this.closing && this.backgroundEngine.available() > 0) engine = this.backgroundEngine;
    if (!engine) {
      reply(msg, { kind: 'busy' });
      return;
    }
    const own = engine === this.endpointEngine;
    if (own) {
      this.inFlight++;
      if (this.inFlight >= this.capacity) void this.leave();
    }
    let released = !own;
    // Frees the endpoint isolate's slot and rejoins the group before the answer goes out.
    const release = () => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.join();
    };
    const served = this.serve(msg, dispatch, engine, release)
      .catch((err: unknown) =>
        this.logger.error({ msg: 'endpoint run not served', runId: dispatch.runId, err: String(err) }),
      )
      .finally(() => {
        release();
        this.running.delete(served);
      });
    this.running.add(served);
  }

  private async serve(msg: Msg, dispatch: EndpointDispatch, engine: SandboxEngine, release: () => void) {
    await context.with(extractTraceContext(msg.headers), async () => {
      // The workspace of a run our own API dispatched in that workspace on our subject.
      const scope = issueWorkspaceScope(dispatch.workspaceSlug);
      // The caller is answered as soon as the function is done and its run recorded; its outcome is written right after.
      const answer = ({ outcome, response }: ExecutedRun) => {
        release();
        reply(msg, { kind: 'done', status: outcome.status, ...(response ? { response } : {}) });
      };
      // With the run in the message it starts at once, recorded as it runs; otherwise it is taken over from its row.
      if (dispatch.run) {
        const run = heldRun(dispatch.runId, dispatch.run, {
          by: dispatch.holder,
          until: new Date(dispatch.run.leaseUntil),
          startedAt: this.clock.now(),
        });
        await this.executor.executeCarried(scope, run, engine, answer);
        return;
      }
      const run = await this.executor.claimDispatched(scope, dispatch.runId, dispatch.holder);
      if (!run) {
        release();
        reply(msg, { kind: 'lost' });
        return;
      }
      await this.executor.execute(scope, run, { engine, onEnd: answer });
    });
  }
}

function reply(msg: Msg, answer: EndpointReply): void {
  respondJson(msg, answer);
}
