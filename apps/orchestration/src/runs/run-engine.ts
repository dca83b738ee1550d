import type { WorkspaceScope } from '@strata/db';
import type { RunRow } from './run-rows.js';

/**
 * What executes runs: the embedded engine (runs claimed from Postgres) or
 * Temporal (one workflow per run), chosen by TEMPORAL_ADDRESS. The API writes
 * the rows and tells the engine.
 */
export abstract class RunEngine {
  /** A run was created or made due (retried from a step): take it up now rather than at the next tick. */
  abstract wake(): void;

  /** A run was cancelled (its rows already say so): stop executing it. */
  abstract cancelled(scope: WorkspaceScope, run: RunRow): Promise<void>;
}
