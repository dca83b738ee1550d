import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { Clock, Coalescer } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { RunEntity } from '../runs/run.entity.js';
import { RunsRepository } from '../runs/runs.repository.js';
import { WORKER_ID } from './worker-id.js';

/** Runs claimed together at most: one statement each batch. */
const MAX_BATCH = 64;

/**
 * Claims queued runs for this worker, a workspace's jobs that arrive together
 * in one statement: a claim that finds none of its workspace in flight goes at
 * once, alone; those that arrive meanwhile go together in the next one.
 */
@Injectable()
export class RunClaims {
  private readonly batches: Coalescer<WorkspaceScope, string, RunEntity | undefined>;

  constructor(runs: RunsRepository, config: ComputeConfig, clock: Clock) {
    this.batches = new Coalescer(
      async (scope, ids) => {
        const now = clock.now();
        const taken = await runs.claimMany(
          scope,
          ids,
          WORKER_ID,
          now,
          new Date(now.getTime() + config.COMPUTE_LEASE_MS),
        );
        // A job that came twice in one batch: its run is the first one's, never twice.
        return ids.map((id) => {
          const run = taken.get(id);
          taken.delete(id);
          return run;
        });
      },
      { id: (scope) => scope.workspace, maxInFlight: 1, maxItems: MAX_BATCH, maxBytes: Infinity, sizeOf: () => 0 },
    );
  }

  /** The run, taken for this worker; undefined when another worker has it or it is not queued. */
  claim(scope: WorkspaceScope, runId: string): Promise<RunEntity | undefined> {
    return this.batches.submit(scope, runId);
  }
}
