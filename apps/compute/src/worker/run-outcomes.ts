import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { Coalescer } from '@strata/platform';
import { RunsRepository, type RunOutcome } from '../runs/runs.repository.js';

/** Outcomes written together at most: one statement each batch. */
const MAX_BATCH = 64;
/** Bytes of logs, results and errors written together at most (a batch always takes one outcome). */
const MAX_BATCH_BYTES = 4 * 1024 * 1024;

interface End {
  readonly id: string;
  readonly workerId: string;
  readonly outcome: RunOutcome;
}

/**
 * Writes how runs ended, a workspace's outcomes in one statement: an outcome
 * that finds no write of its workspace in flight goes at once, alone (no
 * added latency when a worker is idle); those that end meanwhile go together
 * in the next statement (under load, one round trip and one commit for many
 * runs instead of one each).
 */
@Injectable()
export class RunOutcomes {
  private readonly batches: Coalescer<WorkspaceScope, End, boolean>;

  constructor(runs: RunsRepository) {
    this.batches = new Coalescer((scope, ends) => runs.finishMany(scope, ends), {
      id: (scope) => scope.workspace,
      maxInFlight: 1,
      maxItems: MAX_BATCH,
      maxBytes: MAX_BATCH_BYTES,
      sizeOf: ({ outcome: o }) =>
        o.logs.length + o.apiCalls.length + (o.returnValue?.length ?? 0) + (o.error?.length ?? 0),
    });
  }

  /** Records how a run held by `workerId` ended; whether it was still held (and so written). */
  write(scope: WorkspaceScope, id: string, workerId: string, outcome: RunOutcome): Promise<boolean> {
    return this.batches.submit(scope, { id, workerId, outcome });
  }
}
