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
import type { SandboxEngine, SandboxRunner } from '@strata/sandbox';
import { context } from '@opentelemetry/api';
import { ComputeConfig } from '../compute.config.js';
import type { DispatchResult, EndpointCaller } from '../endpoints/endpoint-runner.js';
import { heldRun, parseDispatchedRun } from '../runs/carried-run.js';
import { WorkspaceSuspensions } from '../suspensions/workspace-suspensions.js';
import { RunExecutor, type ExecutedRun } from './run-executor.js';
import { ENDPOINT_SANDBOX_ENGINE, SANDBOX_ENGINE, workspaceIsolates } from './sandbox-engine.provider.js';
import { WorkspaceCreators } from './workspace-creators.js';
import { EndpointWaitQueue, type EndpointWaiter } from './endpoint-wait-queue.js';

/**
 * How often the queue of waiting calls looks for a free background isolate
 * (the endpoint isolates hand themselves to the next waiting call as they free;
 * a background isolate frees without telling) and for calls whose wait is over.
 */
const WAITING_POLL_MS = 20;

/** An endpoint call waiting in this worker for an isolate. */
interface Waiting {
  readonly dispatch: EndpointDispatch;
  /** When it joined the queue (performance.now()), for what is left of its wait for an answer. */
  readonly since: number;
  readonly waitMs: number;
  readonly resolve: (result: DispatchResult) => void;
  /** Stops listening for its caller going away. */
  forget: () => void;
}

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
 * Serves endpoint runs: those this worker's own `/endpoints/{path}` route let
 * in (`runHere`), and those dispatched over NATS. It is a member of the
 * endpoint queue group while it has an endpoint isolate free, out of it (the
 * subscription drained) while they are all busy, so NATS hands calls to
 * workers that can start them now. A call that finds it full anyway takes a
 * free background isolate or is answered `busy`. A call this worker took
 * itself that finds no isolate free here nor on another worker waits for one
 * here (`runWhenFree`), within COMPUTE_ENDPOINT_QUEUE_* and round-robin across
 * workspaces; each isolate that frees goes to the next waiting call before
 * anything else can take it. The answer is sent as soon as
 * the function is done and its run recorded, and its outcome written right
 * after: a worker that dies between the two leaves the run to its lease (the
 * sweep fails it as WorkerLost), though its caller was answered.
 */
@Injectable()
export class EndpointServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EndpointServer');
  private nc: NatsConnection | undefined;
  private subscription: Subscription | undefined;
  private inFlight = 0;
  /** Endpoint runs under way here per workspace, whichever engine runs them. */
  private readonly perWorkspace = new Map<string, number>();
  private closing = false;
  private readonly running = new Set<Promise<void>>();
  private readonly waiting: EndpointWaitQueue<Waiting>;
  private waitingTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly executor: RunExecutor,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
    @Inject(ENDPOINT_SANDBOX_ENGINE) private readonly endpointEngine: SandboxEngine,
    @Inject(SANDBOX_ENGINE) private readonly backgroundEngine: SandboxEngine,
    private readonly suspensions: WorkspaceSuspensions,
    private readonly creators: WorkspaceCreators,
  ) {
    this.waiting = new EndpointWaitQueue(
      {
        total: config.COMPUTE_ENDPOINT_QUEUE_MAX,
        perWorkspace: config.COMPUTE_ENDPOINT_QUEUE_WORKSPACE_MAX,
        waitMs: config.COMPUTE_ENDPOINT_QUEUE_WAIT_MS,
      },
      clock,
    );
  }

  /** Endpoint calls waiting here for an isolate now. */
  get waitingCalls(): number {
    return this.waiting.size;
  }

  /** Joins the queue group before the worker says it is ready (the subscription is flushed to the server). */
  async onApplicationBootstrap(): Promise<void> {
    this.nc = await this.nats.get();
    this.join();
    await this.nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    // Calls still waiting never started: refused (503), as a call arriving now is.
    for (let w = this.waiting.next(() => true); w; w = this.waiting.next(() => true)) this.refuse(w);
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

  /**
   * Runs a call this worker took itself (it serves `/endpoints/{path}` too) on
   * one of its isolates, as a dispatch from the group would run: undefined when
   * none is free, so the caller hands it to another worker. No answer within
   * `waitMs` is a timeout, as it is for a dispatch.
   */
  runHere(dispatch: EndpointDispatch, waitMs: number): Promise<DispatchResult> | undefined {
    // Calls waiting here come first: an isolate free now goes to them before this one.
    if (this.waiting.size > 0) this.serveWaiting();
    const slot = this.take(dispatch.workspaceSlug);
    return slot ? this.runOn(dispatch, slot, waitMs) : undefined;
  }

  /**
   * Runs a call this worker took itself as soon as one of its isolates frees
   * (`runHere` when one is free now): it waits in the queue, its workspace's
   * calls served round-robin with the others'. `unavailable`, with nothing
   * run, past the queue's limits or its wait, when the worker stops, or when
   * the caller goes away first.
   */
  runWhenFree(dispatch: EndpointDispatch, waitMs: number, caller?: EndpointCaller): Promise<DispatchResult> {
    const now = this.runHere(dispatch, waitMs);
    if (now || this.closing) return now ?? Promise.resolve({ kind: 'unavailable' });
    return new Promise<DispatchResult>((resolve) => {
      const entry: Waiting = { dispatch, since: performance.now(), waitMs, resolve, forget: noop };
      const waiter = this.waiting.add(dispatch.workspaceSlug, entry);
      if (!waiter) {
        resolve({ kind: 'unavailable' });
        return;
      }
      if (caller) {
        entry.forget = caller.onGone(() => {
          // Gone before it started: dropped, never run.
          if (this.waiting.remove(waiter)) resolve({ kind: 'unavailable' });
        });
      }
      this.watchWaiting();
    });
  }

  /** Hands every isolate free now to the calls waiting for one, round-robin across workspaces. */
  private serveWaiting(): void {
    while (this.waiting.size > 0) {
      let slot: Slot | undefined;
      const waiter = this.waiting.next((workspace) => (slot = this.take(workspace)) !== undefined);
      if (!waiter || !slot) return;
      const { dispatch, since, waitMs, resolve, forget } = waiter.value;
      forget();
      void this.runOn(dispatch, slot, Math.max(1, waitMs - (performance.now() - since))).then(resolve);
    }
  }

  /** While calls wait: refuses those whose wait is over, and looks for isolates freed without a word. */
  private watchWaiting(): void {
    if (this.waitingTimer || this.waiting.size === 0) return;
    const next = this.waiting.nextDeadline() ?? Infinity;
    const ms = Math.min(WAITING_POLL_MS, Math.max(0, next - this.clock.now().getTime()));
    this.waitingTimer = setTimeout(() => {
      this.waitingTimer = undefined;
      for (const waiter of this.waiting.expired()) this.refuse(waiter);
      this.serveWaiting();
      this.watchWaiting();
    }, ms);
  }

  private refuse(waiter: EndpointWaiter<Waiting>): void {
    waiter.value.forget();
    waiter.value.resolve({ kind: 'unavailable' });
  }

  private runOn(dispatch: EndpointDispatch, slot: Slot, waitMs: number): Promise<DispatchResult> {
    return new Promise<DispatchResult>((resolve) => {
      const timer = setTimeout(() => resolve({ kind: 'timeout' }), waitMs);
      this.start(dispatch, slot, (answer) => {
        clearTimeout(timer);
        // A run this worker started is never answered busy.
        resolve(answer.kind === 'busy' ? { kind: 'unavailable' } : answer);
      });
    });
  }

  private accept(msg: Msg): void {
    const dispatch = parseEndpointDispatch(jsonOf(msg));
    if (!dispatch) {
      reply(msg, { kind: 'lost' });
      return;
    }
    const slot = this.take(dispatch.workspaceSlug);
    if (!slot) {
      reply(msg, { kind: 'busy' });
      return;
    }
    context.with(extractTraceContext(msg.headers), () => this.start(dispatch, slot, (answer) => reply(msg, answer)));
  }

  /**
   * An isolate to run a call of `workspace` on: an endpoint isolate while one
   * is free (leaving the group when the last is taken), else a free background
   * isolate; none while the workspace holds its share of this worker's
   * isolates already (all of them but one; one after it lost an isolate), so
   * one workspace's calls never take every isolate here.
   */
  private take(workspace: string): Slot | undefined {
    if (this.closing) return undefined;
    const held = this.perWorkspace.get(workspace) ?? 0;
    const share = this.suspensions.onProbation(workspace, this.creators.known(workspace))
      ? 1
      : workspaceIsolates(this.config, this.capacity + this.config.COMPUTE_WORKER_ISOLATES);
    if (held >= share) return undefined;
    const slot = this.takeIsolate();
    if (!slot) return undefined;
    this.perWorkspace.set(workspace, held + 1);
    return {
      engine: slot.engine,
      release: once(() => {
        const left = (this.perWorkspace.get(workspace) ?? 1) - 1;
        if (left > 0) this.perWorkspace.set(workspace, left);
        else this.perWorkspace.delete(workspace);
        slot.release();
      }),
    };
  }

  private takeIsolate(): Slot | undefined {
    if (this.inFlight < this.capacity && this.endpointEngine.available() > 0) {
      this.inFlight++;
      if (this.inFlight >= this.capacity) void this.leave();
      return {
        engine: this.endpointEngine,
        // Frees the endpoint isolate's slot: to the next waiting call, or back to the group before the answer goes out.
        release: once(() => {
          this.inFlight--;
          if (this.waiting.size > 0) this.serveWaiting();
          this.join();
        }),
      };
    }
    // Held from now on: no background job or event run can take it before the call's run starts on it
    // (a call that found it free never waits behind one).
    const reservation = this.backgroundEngine.tryReserve();
    return reservation
      ? {
          engine: reservation,
          release: once(() => {
            reservation.release();
            if (this.waiting.size > 0) this.serveWaiting();
          }),
        }
      : undefined;
  }

  /** Serves `dispatch` on `slot`; `answer` is called once: when the function is done, or `lost` if it cannot run. */
  private start(dispatch: EndpointDispatch, slot: Slot, answer: (reply: EndpointReply) => void): void {
    const reply = once((r: EndpointReply) => {
      slot.release();
      answer(r);
    });
    const served = this.serve(dispatch, slot.engine, reply)
      .catch((err: unknown) => {
        this.logger.error({ msg: 'endpoint run not served', runId: dispatch.runId, err: String(err) });
        reply({ kind: 'lost' });
      })
      .finally(() => {
        slot.release();
        this.running.delete(served);
      });
    this.running.add(served);
  }

  private async serve(dispatch: EndpointDispatch, engine: SandboxRunner, answer: (reply: EndpointReply) => void) {
    // The workspace of a run our own API (or this worker's own endpoint route) dispatched in that workspace.
    const scope = issueWorkspaceScope(dispatch.workspaceSlug);
    // The caller is answered as soon as the function is done and its run recorded; its outcome is written right after.
    const done = ({ outcome, response, refused }: ExecutedRun) =>
      answer({
        kind: 'done',
        status: outcome.status,
        ...(response ? { response } : {}),
        ...(refused ? { refused: { until: refused.until.toISOString(), message: refused.message } } : {}),
      });
    // With the run in the message it starts at once, recorded as it runs; otherwise it is taken over from its row.
    if (dispatch.run) {
      const run = heldRun(dispatch.runId, dispatch.run, {
        by: dispatch.holder,
        until: new Date(dispatch.run.leaseUntil),
        startedAt: this.clock.now(),
      });
      await this.executor.executeCarried(scope, run, engine, done);
      return;
    }
    const run = await this.executor.claimDispatched(scope, dispatch.runId, dispatch.holder);
    if (!run) {
      answer({ kind: 'lost' });
      return;
    }
    await this.executor.execute(scope, run, { engine, onEnd: done });
  }
}

/** `fn` on the first call only: a slot is given back, and a caller answered, once, whichever path gets there first. */
function once<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void {
  let done = false;
  return (...args) => {
    if (done) return;
    done = true;
    fn(...args);
  };
}

/** An isolate taken for one call, and how to give it back. */
interface Slot {
  readonly engine: SandboxRunner;
  readonly release: () => void;
}

function noop(): void {}

function reply(msg: Msg, answer: EndpointReply): void {
  respondJson(msg, answer);
}
