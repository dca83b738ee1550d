import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { RunOutcomesRepository, type OutcomeWrite } from '../../runs/run-outcomes.repository.js';
import { Batcher } from './batcher.js';

/**
 * Statements of one workspace's outcomes in flight at once: while they are out,
 * the outcomes that end meanwhile wait and go together in the next statement.
 * Two, not one: a lone statement in flight serialised what the pool's
 * connections did side by side (docs/performance.md).
 */
const IN_FLIGHT = 2;
/** Runs in one statement at most, and their outcomes' text (logs, calls, values) at most. */
const MAX_RUNS = 64;
const MAX_BYTES = 4 * 1024 * 1024;

/**
 * The worker's outcome writes, batched (docs/compute.md, "The job pipeline"):
 * a run's outcome goes at once when fewer than two statements of its
 * workspace are out, else with every outcome that ended while they were, in
 * one statement (`RunOutcomesRepository.finishAll`). No timer: a lone run's
 * write waits for nothing. `written` (a JetStream acknowledgement) is called
 * once the statement answered for the run, for every run of the batch in one
 * go, so their acknowledgements leave in one write to NATS; never before.
 */
@Injectable()
export class RunWrites {
  private readonly batcher: Batcher<WorkspaceScope, OutcomeWrite, boolean>;

  constructor(outcomes: RunOutcomesRepository) {
    this.batcher = new Batcher((scope, writes) => outcomes.finishAll(scope, writes), {
      id: (scope) => scope.workspace,
      maxInFlight: IN_FLIGHT,
      maxItems: MAX_RUNS,
      maxBytes: MAX_BYTES,
      sizeOf: ({ outcome: o }) =>
        o.logs.length + o.apiCalls.length + (o.returnValue?.length ?? 0) + (o.error?.length ?? 0),
      distinct: (write) => write.id,
    });
  }

  /** Writes a run's outcome (with other runs' when they come together); whether it was written. Rejects when the statement failed. */
  finish(scope: WorkspaceScope, write: OutcomeWrite, written?: (done: boolean) => void): Promise<boolean> {
    return this.batcher.submit(scope, write, written);
  }

  /** Statements sent and the runs they wrote, since the worker started. */
  get sent(): { readonly batches: number; readonly items: number } {
    return this.batcher.sent;
  }
}
