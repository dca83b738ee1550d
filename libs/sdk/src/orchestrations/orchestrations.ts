import { ITERATOR_PAGE_SIZE as SIZE, walkPages } from '../http/pages.js';
import { Resource, segment, type CallOptions, type JsonObject } from '../http/resource.js';
import type {
  DecisionResult,
  Orchestration,
  OrchestrationInput,
  OrchestrationListQuery,
  OrchestrationRun,
  PageMeta,
  RunState,
  RunStep,
} from './types.js';

/** `{orch_base}/orchestrations`: workflows of compute, decision and delay steps, and their runs. */
export class Orchestrations extends Resource {
  readonly runs: OrchestrationRuns;

  constructor(...args: ConstructorParameters<typeof Resource>) {
    super(...args);
    this.runs = new OrchestrationRuns(...args);
  }

  list(query: OrchestrationListQuery = {}, options?: CallOptions): Promise<{ data: Orchestration[]; meta: PageMeta }> {
    return this.read('/orchestrations', { ...query }, options);
  }

  /** Every orchestration, page after page (see `walkPages`). */
  iterate(
    query: Omit<OrchestrationListQuery, 'page' | 'pageSize'> = {},
    options?: CallOptions,
  ): AsyncGenerator<Orchestration> {
    return walkPages(SIZE, async (index) => {
      const page = await this.list({ ...query, page: index + 1, pageSize: SIZE }, options);
      return { items: page.data, total: page.meta.total };
    });
  }

  create(input: OrchestrationInput, options?: CallOptions): Promise<Orchestration> {
    return this.call('POST', '/orchestrations', { body: input, signal: options?.signal });
  }

  get(id: string, options?: CallOptions): Promise<Orchestration> {
    return this.read(`/orchestrations/${segment(id)}`, undefined, options);
  }

  /** Any of name, description, status, trigger, steps; the version goes up by one. */
  update(id: string, input: Partial<Omit<OrchestrationInput, 'slug'>>, options?: CallOptions): Promise<Orchestration> {
    return this.call('PUT', `/orchestrations/${segment(id)}`, { body: input, signal: options?.signal });
  }

  /** 204; runs that have not ended are cancelled. */
  async delete(id: string, options?: CallOptions): Promise<void> {
    await this.call('DELETE', `/orchestrations/${segment(id)}`, { signal: options?.signal });
  }

  /** Evaluates a decision step against `testData`; no run is created. */
  testDecision(id: string, stepId: string, testData: JsonObject, options?: CallOptions): Promise<DecisionResult> {
    return this.call('POST', `/orchestrations/${segment(id)}/steps/${segment(stepId)}/test-decision`, {
      body: { testData },
      signal: options?.signal,
    });
  }
}

/** `{orch_base}/orchestrations/{id}/runs`. */
export class OrchestrationRuns extends Resource {
  /** Starts a run (201, `pending`); 409 while the orchestration is paused. */
  start(
    orchestrationId: string,
    input: { input?: JsonObject; correlationId?: string } = {},
    options?: CallOptions,
  ): Promise<OrchestrationRun> {
    return this.call('POST', `/orchestrations/${segment(orchestrationId)}/runs`, {
      body: input,
      signal: options?.signal,
    });
  }

  list(
    orchestrationId: string,
    query: { page?: number; pageSize?: number; status?: RunState } = {},
    options?: CallOptions,
  ): Promise<{ data: OrchestrationRun[]; meta: PageMeta }> {
    return this.read(`/orchestrations/${segment(orchestrationId)}/runs`, { ...query }, options);
  }

  /** Every run of the orchestration (of `status`, when given), page after page (see `walkPages`). */
  iterate(
    orchestrationId: string,
    query: { status?: RunState } = {},
    options?: CallOptions,
  ): AsyncGenerator<OrchestrationRun> {
    return walkPages(SIZE, async (index) => {
      const page = await this.list(orchestrationId, { ...query, page: index + 1, pageSize: SIZE }, options);
      return { items: page.data, total: page.meta.total };
    });
  }

  get(
    orchestrationId: string,
    runId: string,
    query: { include?: 'steps' } = {},
    options?: CallOptions,
  ): Promise<OrchestrationRun> {
    return this.read(`/orchestrations/${segment(orchestrationId)}/runs/${segment(runId)}`, { ...query }, options);
  }

  steps(orchestrationId: string, runId: string, options?: CallOptions): Promise<{ data: RunStep[] }> {
    return this.read(`/orchestrations/${segment(orchestrationId)}/runs/${segment(runId)}/steps`, undefined, options);
  }

  /** The run fails with `Cancelled by <principal>`; 409 for a run that has ended. */
  cancel(orchestrationId: string, runId: string, options?: CallOptions): Promise<OrchestrationRun> {
    return this.call('POST', `/orchestrations/${segment(orchestrationId)}/runs/${segment(runId)}/cancel`, {
      signal: options?.signal,
    });
  }

  /** Resumes a run that failed at a step, from that step. */
  retry(orchestrationId: string, runId: string, options?: CallOptions): Promise<OrchestrationRun> {
    return this.call('POST', `/orchestrations/${segment(orchestrationId)}/runs/${segment(runId)}/retry`, {
      signal: options?.signal,
    });
  }
}
