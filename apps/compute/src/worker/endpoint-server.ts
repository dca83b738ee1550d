import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  computeEndpointQueue,
  computeEndpointSubject,
  type DispatchedRun,
  type EndpointDispatch,
  type EndpointReply,
} from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { extractTraceContext } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import type { SandboxEngine } from '@strata/sandbox';
import { context } from '@opentelemetry/api';
import { ComputeConfig } from '../compute.config.js';
import { RunEntity } from '../runs/run.entity.js';
import { RunExecutor } from './run-executor.js';
import { ENDPOINT_SANDBOX_ENGINE, SANDBOX_ENGINE } from './sandbox-engine.provider.js';

/** Narrows a dispatch message; anything else is answered `lost`. */
export function parseEndpointDispatch(payload: unknown): EndpointDispatch | undefined {
  const p = payload as Record<string, unknown> | null;
  if (typeof p !== 'object' || p === null) return undefined;
  const { runId, workspaceSlug, holder, run } = p;
  if (typeof runId !== 'string' || typeof workspaceSlug !== 'string' || typeof holder !== 'string') return undefined;
  return isDispatchedRun(run) ? { runId, workspaceSlug, holder, run } : { runId, workspaceSlug, holder };
}

function isDispatchedRun(value: unknown): value is DispatchedRun {
  const r = value as Record<string, unknown> | null | undefined;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r['functionId'] === 'string' &&
    typeof r['functionVersion'] === 'number' &&
    typeof r['params'] === 'string' &&
    typeof r['limits'] === 'object' &&
    r['limits'] !== null &&
    typeof r['createdBy'] === 'string' &&
    typeof r['invocationDepth'] === 'number'
  );
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
    const dispatch = parseEndpointDispatch(safeJson(msg));
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
      // The workspace of a run our own API inserted in that workspace and dispatched on our subject.
      const scope = issueWorkspaceScope(dispatch.workspaceSlug);
      // With the run in the message it starts at once (its outcome is written under the hold);
      // otherwise the worker takes it over from its row first.
      const carried = dispatch.run ? runOf(dispatch, dispatch.run) : undefined;
      const run = carried ?? (await this.executor.claimDispatched(scope, dispatch.runId, dispatch.holder));
      if (!run) {
        release();
        reply(msg, { kind: 'lost' });
        return;
      }
      // The caller is answered as soon as the function is done; its outcome is written right after.
      await this.executor.execute(
        scope,
        run,
        engine,
        carried ? dispatch.holder : undefined,
        ({ outcome, response }) => {
          release();
          reply(msg, { kind: 'done', status: outcome.status, ...(response ? { response } : {}) });
        },
      );
    });
  }
}

/** The run row's parts a dispatch carries, as the executor reads a row. */
function runOf(dispatch: EndpointDispatch, carried: DispatchedRun): RunEntity {
  return Object.assign(new RunEntity(), {
    id: dispatch.runId,
    workspaceSlug: dispatch.workspaceSlug,
    functionId: carried.functionId,
    functionVersion: carried.functionVersion,
    code: null,
    params: carried.params,
    limits: { ...carried.limits },
    createdBy: carried.createdBy,
    executionContext: { invocationDepth: carried.invocationDepth },
  });
}

function safeJson(msg: Msg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}

function reply(msg: Msg, answer: EndpointReply): void {
  msg.respond(JSON.stringify(answer));
}
