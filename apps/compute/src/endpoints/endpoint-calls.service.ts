import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { ErrorCode, isWorkspaceSlug, type DispatchedRun } from '@strata/contracts';
import { issueWorkspaceScope, type WorkspaceScope } from '@strata/db';
import { Clock, decodeContentEncoding, readRawBody, StrataException, WorkspacePlans } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { ExecutionBudget } from '../runs/execution-budget.js';
import { RunQueue, type RunRequest } from '../runs/run-queue.js';
import { dispatchedRun } from '../runs/carried-run.js';
import { RunsRepository, type NewRun } from '../runs/runs.repository.js';
import { DEFAULT_TIMEOUT_MS, TRIGGER_PATH, type HttpMethod } from '../triggers/metadata/index.js';
import { TriggerExecutions } from '../triggers/trigger-executions.service.js';
import type { TriggerEntity } from '../triggers/trigger.entity.js';
import { EndpointAuthenticator } from './endpoint-authenticator.js';
import { TriggerLookups } from '../triggers/trigger-lookups.js';
import { refusalException } from '../suspensions/suspension-refusal.js';
import { WorkspaceSuspensions } from '../suspensions/workspace-suspensions.js';
import { EndpointRunner, type EndpointCaller } from './endpoint-runner.js';
import { endpointRequestOf, payloadOf } from './endpoint-request.js';
import { endpointCookiePath, type CookiePolicy } from './endpoint-response-policy.js';
import { RUN_ID_HEADER, sendEndpointResponse, setEndpointSecurityHeaders } from './endpoint-response.js';

/**
 * One call of an endpoint trigger, `{data_base}/endpoints/{path}`, in the
 * order of the spec's statuses: 404 (no live endpoint at the path), 405 (method),
 * 413 (body), 401/403 (the endpoint's auth modes), 400/415 (body), 429
 * (a suspended workspace; the executions limit, recorded on a rate_limited run), then the run: handed to a
 * worker with a free isolate, or waiting in the serving worker's bounded queue for one (503 past the
 * queue's limits or wait, with nothing run), answered
 * with the function's response, 500 when it failed, 504 past timeoutMs.
 */
@Injectable()
export class EndpointCalls {
  private readonly logger = new Logger('EndpointCalls');

  constructor(
    private readonly lookups: TriggerLookups,
    private readonly authenticator: EndpointAuthenticator,
    private readonly executions: TriggerExecutions,
    private readonly budget: ExecutionBudget,
    private readonly queue: RunQueue,
    private readonly runs: RunsRepository,
    private readonly runner: EndpointRunner,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
    private readonly suspensions: WorkspaceSuspensions,
    private readonly plans: WorkspacePlans,
  ) {}

  async call(
    req: IncomingMessage & { readonly method: string },
    res: ServerResponse,
    workspace: string,
    path: string,
  ): Promise<void> {
    // Whatever the answer turns out to be (the function's, or an error), it is an endpoint's.
    setEndpointSecurityHeaders(res);
    const notFound = () => StrataException.notFound(`No endpoint at /endpoints/${path}.`);
    if (!isWorkspaceSlug(workspace) || !TRIGGER_PATH.test(path)) throw notFound();
    // The URL's workspace, before any credential: the endpoint found in it names its own auth modes.
    const scope = issueWorkspaceScope(workspace);
    const found = await this.lookups.endpointAt(scope, path);
    if (!found || found.trigger.paused) throw notFound();
    const { trigger, fn } = found;
    // A trigger whose function is gone runs nothing: there is no endpoint any more.
    if (!fn) throw notFound();

    const allowed = (trigger.metadata['allowedMethods'] as HttpMethod[] | undefined) ?? ['POST'];
    if (!(allowed as string[]).includes(req.method)) {
      throw new StrataException(
        ErrorCode.METHOD_NOT_ALLOWED,
        `Method ${req.method} is not allowed on /endpoints/${path}; it takes ${allowed.join(', ')}.`,
        undefined,
        { Allow: allowed.join(', ') },
      );
    }
    const body = await readRawBody(req, this.config.COMPUTE_ENDPOINT_MAX_BODY_BYTES);
    const rawQuery = queryStringOf((req as { originalUrl?: string }).originalUrl ?? req.url ?? '');
    const target = `/endpoints/${path}${rawQuery ? `?${rawQuery}` : ''}`;
    // An hmac signature covers the body as sent; the function sees it decoded.
    const caller = await this.authenticator.authenticate({ req, res, scope, trigger, target, body });
    // A plan without endpoints answers its callers 403 PLAN_RESTRICTED (docs/plans.md).
    await this.plans.ensureFeature(scope, 'endpoints');
    const payload = payloadOf(req, decodeContentEncoding(req, body, this.config.COMPUTE_ENDPOINT_MAX_BODY_BYTES));
    const request = endpointRequestOf(req, path, rawQuery, payload, {
      mode: caller.mode,
      ...(caller.principalType ? { principalType: caller.principalType } : {}),
      ...(caller.principalId ? { principalId: caller.principalId } : {}),
    });

    const timeoutMs = timeoutOf(trigger);
    const base = await this.executions.runRequest(scope, trigger, {}, 'trigger', caller.by, 0, fn);
    const run: RunRequest = {
      ...base,
      params: { ...base.params, request },
      context: { ...base.context, endpoint: { path, method: req.method, auth: caller.mode } },
      limits: { wallMs: timeoutMs, cpuMs: Math.min(this.config.COMPUTE_CPU_MS, timeoutMs) },
    };
    const cookies: CookiePolicy = {
      allowed: trigger.metadata['allowCookies'] === true,
      path: endpointCookiePath(scope.workspace),
    };
    await this.execute(scope, req, res, run, timeoutMs, cookies);
  }

  private async execute(
    scope: WorkspaceScope,
    req: IncomingMessage,
    res: ServerResponse,
    request: RunRequest,
    timeoutMs: number,
    cookies: CookiePolicy,
  ): Promise<void> {
    const holder = `dispatch-${randomUUID()}`;
    // A call may wait for an isolate first (the worker's queue): its hold and the wait for its answer cover that too.
    const waitMs = timeoutMs + this.config.COMPUTE_ENDPOINT_GRACE_MS + this.config.COMPUTE_ENDPOINT_QUEUE_WAIT_MS;
    const leaseUntil = new Date(this.clock.now().getTime() + waitMs);
    // Its runs lost isolates: nothing of the workspace starts until the suspension ends.
    const suspended = this.suspensions.workspaceRefusal(scope.workspace);
    if (suspended) throw refusalException(suspended, this.clock.now());
    // Mostly answered from this replica's reservation, without a round trip.
    if (!(await this.budget.take(scope))) {
      const refused = this.queue.refused(request);
      res.setHeader(RUN_ID_HEADER, refused.id);
      await this.runs.insert(scope, undefined, refused);
      throw new StrataException(
        ErrorCode.RATE_LIMITED,
        `The workspace reached its limit of ${this.config.RATE_LIMIT_EXECUTE_PER_MINUTE} function executions per minute.`,
        undefined,
        { 'Retry-After': String(Math.max(1, Math.ceil(this.config.RATE_LIMIT_WINDOW_MS / 1000))) },
      );
    }
    const run = this.queue.dispatched(request, holder, leaseUntil);
    res.setHeader(RUN_ID_HEADER, run.id);
    // Carried in the dispatch, the run is recorded by the worker while it runs; otherwise here, first.
    const carried = dispatchedRun(run);
    if (!carried) await this.runs.insert(scope, undefined, run);
    const result = await this.runner.dispatch(
      { runId: run.id, workspaceSlug: scope.workspace, holder, ...(carried ? { run: carried } : {}) },
      waitMs,
      callerOf(req, res),
    );
    switch (result.kind) {
      case 'unavailable':
        if (!carried) await this.runs.discardUndispatched(scope, run.id, holder);
        res.removeHeader(RUN_ID_HEADER);
        throw new StrataException(
          ErrorCode.UNAVAILABLE,
          'No compute worker is free to run this endpoint (none had an isolate free within the wait queue’s limits); the request was not queued. Try again shortly.',
          undefined,
          { 'Retry-After': '1' },
        );
      case 'timeout':
        await this.recordUnanswered(scope, run, carried);
        throw timedOut(timeoutMs, run.id);
      case 'lost':
        await this.recordUnanswered(scope, run, carried);
        throw new StrataException(ErrorCode.INTERNAL, `The endpoint could not be run (run ${run.id}).`);
      case 'done':
        // Refused by the worker (its code lost an isolate before, or the worker heard of the
        // workspace's suspension before this replica did): a 429 all the same.
        if (result.refused) {
          throw refusalException(
            { until: new Date(result.refused.until), message: result.refused.message },
            this.clock.now(),
          );
        }
        if (result.status === 'timed_out') throw timedOut(timeoutMs, run.id);
        if (result.status !== 'succeeded' || !result.response) {
          // The error stays on the run (the owner reads it there), not in the caller's answer.
          throw new StrataException(ErrorCode.INTERNAL, `The endpoint function failed (run ${run.id}).`);
        }
        sendEndpointResponse(res, result.response, cookies);
        return;
    }
  }

  /**
   * No worker answered a carried run: it is recorded here unless its worker
   * did, still held by the dispatch, so the sweep fails it (WorkerLost) once
   * its lease ends. A call is never left without a run.
   */
  private async recordUnanswered(scope: WorkspaceScope, run: NewRun, carried: DispatchedRun | undefined) {
    if (!carried) return;
    await this.runs.insertIfAbsent(scope, run).catch((err: unknown) => {
      this.logger.error({ msg: 'unanswered endpoint run not recorded', runId: run.id, err: String(err) });
    });
  }
}

/** The caller as a waiting run sees it: gone once its connection closes before the answer. */
function callerOf(req: IncomingMessage, res: ServerResponse): EndpointCaller {
  return {
    onGone(listener) {
      if (req.socket.destroyed) {
        listener();
        return () => undefined;
      }
      const gone = () => {
        if (!res.writableEnded) listener();
      };
      res.once('close', gone);
      return () => res.off('close', gone);
    },
  };
}

function timedOut(timeoutMs: number, runId: string): StrataException {
  return new StrataException(ErrorCode.TIMEOUT, `The endpoint did not answer within ${timeoutMs} ms (run ${runId}).`);
}

function timeoutOf(trigger: TriggerEntity): number {
  const value = trigger.metadata['timeoutMs'];
  return typeof value === 'number' ? value : DEFAULT_TIMEOUT_MS;
}

/** The query string exactly as sent (what a signature covers), without the `?`. */
function queryStringOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}
