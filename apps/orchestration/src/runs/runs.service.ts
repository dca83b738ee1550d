import { Injectable } from '@nestjs/common';
import { newOrchestrationRunId } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import type { JsonValue } from '@strata/workflow';
import { ORCHESTRATION_NOT_FOUND } from '../orchestrations/orchestrations.service.js';
import { OrchestrationsRepository } from '../orchestrations/orchestrations.repository.js';
import type { RunDetailQueryRequest, RunListQueryRequest, StartRunRequest } from './dto/run.requests.js';
import { RunEngine } from './run-engine.js';
import { runView, stepView } from './run-view.js';
import { RunsRepository } from './runs.repository.js';

export const RUN_NOT_FOUND = 'Run not found';

/** Runs of an orchestration: start one by hand, list, read with its steps. */
@Injectable()
export class RunsService {
  constructor(
    private readonly orchestrations: OrchestrationsRepository,
    private readonly runs: RunsRepository,
    private readonly engine: RunEngine,
    private readonly clock: Clock,
  ) {}

  /**
   * A manual run (`triggerType: manual`) of the orchestration's current version,
   * `pending` and due at once. A draft may be run by hand (to try it); a paused
   * orchestration may not (409).
   */
  async start(scope: WorkspaceScope, by: string, orchestrationId: string, body: StartRunRequest | undefined) {
    const orchestration = await this.orchestrations.find(scope, orchestrationId);
    if (!orchestration) throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
    if (orchestration.status === 'paused') throw StrataException.conflict('Orchestration is paused');
    const now = this.clock.now();
    const run = {
      id: newOrchestrationRunId(),
      workspace_slug: scope.workspace,
      orchestration_id: orchestration.id,
      orchestration_version: orchestration.version,
      status: 'pending' as const,
      current_step_id: null,
      current_attempt: 1,
      input: (body?.input ?? {}) as JsonValue,
      context: {},
      step_outputs: {},
      correlation_id: body?.correlationId ?? null,
      trigger_type: 'manual',
      trigger_metadata: { initiatedByPrincipalId: by },
      has_errors: false,
      delay_step_count: 0,
      failure_reason: null,
      executed_steps: [],
      errors: [],
      due_at: now,
      created_at: now,
      started_at: null,
      completed_at: null,
      ttl_expires_at: null,
    };
    await this.runs.insert(scope, run);
    this.engine.wake();
    return runView(run);
  }

  async list(scope: WorkspaceScope, orchestrationId: string, q: RunListQueryRequest) {
    if (!(await this.orchestrations.find(scope, orchestrationId)))
      throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
    const query = { page: q.page ?? 1, pageSize: q.pageSize ?? 20, status: q.status };
    const { rows, total } = await this.runs.list(scope, orchestrationId, query);
    return { data: rows.map(runView), meta: { total, page: query.page, pageSize: query.pageSize } };
  }

  async get(scope: WorkspaceScope, orchestrationId: string, runId: string, q: RunDetailQueryRequest) {
    const run = await this.runs.find(scope, orchestrationId, runId);
    if (!run) throw StrataException.notFound(RUN_NOT_FOUND);
    if (q.include !== 'steps') return runView(run);
    return { ...runView(run), steps: (await this.runs.steps(scope, run.id)).map(stepView) };
  }

  async steps(scope: WorkspaceScope, orchestrationId: string, runId: string) {
    const run = await this.runs.find(scope, orchestrationId, runId);
    if (!run) throw StrataException.notFound(RUN_NOT_FOUND);
    return { data: (await this.runs.steps(scope, run.id)).map(stepView) };
  }
}
