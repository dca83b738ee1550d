import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import type { RunListQueryRequest } from './dto/run-list.query.js';
import { runView } from './run-view.js';
import { RunsRepository } from './runs.repository.js';

export const RUN_NOT_FOUND = 'Function run not found.';

/**
 * Reading function runs: the list (filters, newest first; one job's with their result and logs)
 * and the detail with logs.
 */
@Injectable()
export class RunsService {
  constructor(private readonly runs: RunsRepository) {}

  async list(scope: WorkspaceScope, q: RunListQueryRequest) {
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.runs.list(scope, {
      jobId: q.jobId,
      withOutput: q.jobId !== undefined,
      functionId: q.functionId,
      triggerId: q.triggerId,
      status: q.status,
      since: q.since === undefined ? undefined : new Date(q.since),
      until: q.until === undefined ? undefined : new Date(q.until),
      page,
      limit,
    });
    // One job's runs (the spec's "test results") with what they produced; other lists stay light.
    const shape = q.jobId === undefined ? 'row' : 'output';
    return { runs: rows.map((r) => runView(r, shape)), total, page, limit };
  }

  async get(scope: WorkspaceScope, id: string) {
    const run = await this.runs.find(scope, id);
    if (!run) throw StrataException.notFound(RUN_NOT_FOUND);
    return runView(run, 'detail');
  }
}
