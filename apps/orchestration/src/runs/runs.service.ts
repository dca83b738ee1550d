import { Injectable } from '@nestjs/common';
import { Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { OrchestrationConfig } from '../orchestration.config.js';
import { Clock, StrataException } from '@strata/platform';
import type { JsonValue } from '@strata/workflow';
import { ORCHESTRATION_NOT_FOUND } from '../orchestrations/orchestration-names.js';
import { OrchestrationsRepository } from '../orchestrations/orchestrations.repository.js';
import type { RunDetailQueryRequest, RunListQueryRequest, StartRunRequest } from './dto/run.requests.js';
import { RunEngine } from './run-engine.js';
import { pendingRun, type RunStart } from './run-progress.js';
import { runView, stepView } from './run-view.js';
import type { OrchestrationEntity } from '../orchestrations/orchestration.entity.js';
import { cancelledBy, hasEnded, type RunRow } from './run-rows.js';
import { RunsRepository } from './runs.repository.js';

export const RUN_NOT_FOUND = 'Run not found';

/** Thrown inside a run's transaction when its orchestration is gone: the event's claim rolls back with it. */
const ORCHESTRATION_GONE = new Error('orchestration deleted while its run was written');

/** Runs of an orchestration: start one by hand, list, read with its steps. */
@Injectable()
export class RunsService {
  constructor(
    private readonly orchestrations: OrchestrationsRepository,
    private readonly runs: RunsRepository,
    private readonly engine: RunEngine,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    config: OrchestrationConfig,
  ) {
    this.retentionMs = config.ORCHESTRATION_RUN_RETENTION_DAYS * 86_400_000;
  }

  private readonly retentionMs: number;

  /**
   * A manual run (`triggerType: manual`) of the orchestration's current version,
   * `pending` and due at once. A draft may be run by hand (to try it); a paused
   * orchestration may not (409).
   */
  async start(scope: WorkspaceScope, by: string, orchestrationId: string, body: StartRunRequest | undefined) {
    const orchestration = await this.orchestrations.find(scope, orchestrationId);
    if (!orchestration) throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
    if (orchestration.status === 'paused') throw StrataException.conflict('Orchestration is paused');
    return runView(
      await this.create(scope, orchestration, {
        input: (body?.input ?? {}) as JsonValue,
        correlationId: body?.correlationId ?? null,
        triggerType: 'manual',
        triggerMetadata: { initiatedByPrincipalId: by },
      }),
    );
  }

  /** A new run of the orchestration's current version, `pending` and due at once (in `start.tx` when given). */
  create(scope: WorkspaceScope, orchestration: OrchestrationEntity, start: RunStart & { tx?: Tx }): Promise<RunRow>;
  /**
   * The same for a record event or a webhook delivery: undefined when this event started a
   * run of this orchestration already. A key with an end (`eventExpiresAt`, a plain HMAC
   * signature's claim) only while that end is after now.
   */
  create(
    scope: WorkspaceScope,
    orchestration: OrchestrationEntity,
    start: RunStart & { eventId: string; eventExpiresAt?: Date },
  ): Promise<RunRow | undefined>;
  async create(
    scope: WorkspaceScope,
    orchestration: OrchestrationEntity,
    start: RunStart & { eventId?: string; eventExpiresAt?: Date; tx?: Tx },
  ): Promise<RunRow | undefined> {
    const now = this.clock.now();
    const run = pendingRun(scope, orchestration, start, now);
    const eventId = start.eventId;
    if (eventId === undefined) {
      // Deleted since it was read: no run (the delete's cancellation could not see it).
      if (!(await this.runs.insert(scope, run, start.tx))) throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
    } else {
      const fresh = await this.transactions
        .run(async (tx) => {
          const expiresAt = start.eventExpiresAt ?? null;
          if (!(await this.runs.claimEvent(scope, tx, eventId, orchestration.id, run.id, now, expiresAt))) return false;
          // A deleted orchestration starts nothing, and keeps no claim (no run would ever delete it).
          if (!(await this.runs.insert(scope, run, tx))) throw ORCHESTRATION_GONE;
          return true;
        })
        .catch((err: unknown) => {
          if (err === ORCHESTRATION_GONE) return false;
          throw err;
        });
      if (!fresh) return undefined;
    }
    this.engine.wake();
    return run;
  }

  /**
   * Stops a pending, running or waiting run: it fails with `Cancelled by <who>`; a
   * step in flight is marked failed (a function run already started finishes in
   * compute, and its outcome is no longer read). 409 for a finished run.
   */
  async cancel(scope: WorkspaceScope, by: string, orchestrationId: string, runId: string) {
    const cancelled = await this.transactions.run(async (tx) => {
      const run = await this.runs.find(scope, orchestrationId, runId, tx);
      if (!run) throw StrataException.notFound(RUN_NOT_FOUND);
      if (hasEnded(run.status)) {
        throw StrataException.conflict(
          `The run is ${run.status}; only a pending, running or waiting run can be cancelled`,
        );
      }
      const now = this.clock.now();
      for (const step of await this.runs.steps(scope, run.id, tx)) {
        if (step.status === 'running' || step.status === 'waiting') {
          await this.runs.saveStep(scope, tx, {
            ...step,
            status: 'failed',
            error: { message: cancelledBy(by), code: 'CANCELLED' },
            completed_at: now,
          });
        }
      }
      run.status = 'failed';
      run.failure_reason = cancelledBy(by);
      run.completed_at = now;
      run.ttl_expires_at = new Date(now.getTime() + this.retentionMs);
      run.due_at = null;
      await this.runs.save(scope, tx, run);
      return run;
    });
    await this.engine.cancelled(scope, cancelled);
    return runView(cancelled);
  }

  /**
   * Runs a failed run again from the step that failed (attempt 1), keeping the
   * outputs of the steps that succeeded; the version is the one it started on.
   * 409 when the run did not fail at a step (completed, cancelled while pending).
   */
  async retry(scope: WorkspaceScope, orchestrationId: string, runId: string) {
    const retried = await this.transactions.run(async (tx) => {
      const run = await this.runs.find(scope, orchestrationId, runId, tx);
      if (!run) throw StrataException.notFound(RUN_NOT_FOUND);
      const failedStep = (await this.runs.steps(scope, run.id, tx)).filter((s) => s.status === 'failed').at(-1);
      if (run.status !== 'failed' || !failedStep) {
        throw StrataException.conflict('Only a run that failed at a step can be retried from it');
      }
      run.status = 'running';
      run.current_step_id = failedStep.step_id;
      run.current_attempt = 1;
      run.failure_reason = null;
      run.completed_at = null;
      run.ttl_expires_at = null;
      run.due_at = this.clock.now();
      await this.runs.save(scope, tx, run);
      return run;
    });
    this.engine.wake();
    return runView(retried);
  }

  /** The run an event (a record event, a webhook delivery) started of the orchestration, if it is still kept. */
  runOfEvent(scope: WorkspaceScope, eventId: string, orchestrationId: string) {
    return this.runs.runOfEvent(scope, eventId, orchestrationId, this.clock.now());
  }

  async list(scope: WorkspaceScope, orchestrationId: string, q: RunListQueryRequest) {
    await this.assertOrchestration(scope, orchestrationId);
    const query = { page: q.page ?? 1, pageSize: q.pageSize ?? 20, status: q.status };
    const { rows, total } = await this.runs.list(scope, orchestrationId, query);
    return { data: rows.map(runView), meta: { total, page: query.page, pageSize: query.pageSize } };
  }

  /**
   * Stops the runs of an orchestration being deleted, each as `cancel` does
   * (`Cancelled by <who>`): a deleted orchestration runs nothing any more.
   */
  async cancelAllOf(scope: WorkspaceScope, by: string, orchestrationId: string): Promise<void> {
    for (const runId of await this.runs.openIdsOf(scope, orchestrationId)) {
      await this.cancel(scope, by, orchestrationId, runId).catch((err: unknown) => {
        // Ended meanwhile (409): nothing to stop.
        if (!(err instanceof StrataException)) throw err;
      });
    }
  }

  async get(scope: WorkspaceScope, orchestrationId: string, runId: string, q: RunDetailQueryRequest) {
    await this.assertOrchestration(scope, orchestrationId);
    const run = await this.runs.find(scope, orchestrationId, runId);
    if (!run) throw StrataException.notFound(RUN_NOT_FOUND);
    if (q.include !== 'steps') return runView(run);
    return { ...runView(run), steps: (await this.runs.steps(scope, run.id)).map(stepView) };
  }

  async steps(scope: WorkspaceScope, orchestrationId: string, runId: string) {
    await this.assertOrchestration(scope, orchestrationId);
    const run = await this.runs.find(scope, orchestrationId, runId);
    if (!run) throw StrataException.notFound(RUN_NOT_FOUND);
    return { data: (await this.runs.steps(scope, run.id)).map(stepView) };
  }

  /** A deleted orchestration's runs are gone with it from the API (404), as its run list is. */
  private async assertOrchestration(scope: WorkspaceScope, orchestrationId: string): Promise<void> {
    if (!(await this.orchestrations.find(scope, orchestrationId))) {
      throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
    }
  }
}
