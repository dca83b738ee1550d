import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import type { Clock } from '../clock/clock.js';
import { PeriodicTask } from './periodic-task.js';

/** Rows one retention statement deletes at most, unless its rule says otherwise. */
export const RETENTION_BATCH_SIZE = 1000;
/** Batches per rule and pass: a pass stays bounded; what is left goes in the next pass, started at once. */
export const RETENTION_BATCHES_PER_PASS = 100;

/** A batch that read rows it kept (a cursor over candidates): how many went, and whether to go on. */
export interface RetentionBatch {
  readonly deleted: number;
  readonly more: boolean;
}

/**
 * What one table (or one part of it) keeps, for one pass of a retention sweep:
 * `deleteBatch(limit)` deletes at most `limit` rows that are past their window
 * (the rule is made for the pass, with the pass's `now`) and answers how many
 * went. Fewer than `limit` means nothing past the window is left for now; a
 * rule whose batch may keep some of the rows it reads answers `{deleted, more}`.
 *
 * Each call must be short and safe beside itself on another replica: one
 * statement (or a few) that picks its rows `FOR UPDATE SKIP LOCKED` (or by a
 * lock of its own), so that two sweepers never wait on each other, never
 * delete a row twice, and never hold many locks for long.
 */
export interface RetentionRule {
  /** The table in logs and metrics (`webhooks.deliveries`); never a value of a row. */
  readonly table: string;
  /** Rows per batch (RETENTION_BATCH_SIZE unless given): smaller where a row drags others with it (cascades). */
  readonly batchSize?: number;
  deleteBatch(limit: number): Promise<number | RetentionBatch>;
}

/** Rows deleted by one pass, by table. */
export type RetentionReport = Readonly<Record<string, number>>;

export interface RetentionPassOptions {
  readonly batchesPerPass?: number;
  /** Called after each batch that deleted rows. */
  readonly onDeleted?: (table: string, deleted: number) => void;
}

export interface RetentionPass {
  readonly deleted: RetentionReport;
  /** Tables that stopped at the pass's cap of batches with rows still to delete. */
  readonly unfinished: readonly string[];
  /** Rules that failed (the others ran all the same). */
  readonly failures: readonly { readonly table: string; readonly error: unknown }[];
}

/**
 * One pass over `rules`, one after another: each deletes batch after batch
 * until a batch comes back short, or until `batchesPerPass` batches (then the
 * table is `unfinished`). A rule that fails is reported and the next one runs.
 */
export async function runRetentionPass(
  rules: readonly RetentionRule[],
  options: RetentionPassOptions = {},
): Promise<RetentionPass> {
  const cap = options.batchesPerPass ?? RETENTION_BATCHES_PER_PASS;
  const deleted: Record<string, number> = {};
  const unfinished: string[] = [];
  const failures: { table: string; error: unknown }[] = [];
  for (const rule of rules) {
    const limit = rule.batchSize ?? RETENTION_BATCH_SIZE;
    let total = 0;
    try {
      for (let batch = 0; ; batch++) {
        if (batch === cap) {
          unfinished.push(rule.table);
          break;
        }
        const answer = await rule.deleteBatch(limit);
        const n = typeof answer === 'number' ? answer : answer.deleted;
        total += n;
        if (n > 0) options.onDeleted?.(rule.table, n);
        if (typeof answer === 'number' ? n < limit : !answer.more) break;
      }
    } catch (error) {
      failures.push({ table: rule.table, error });
    }
    deleted[rule.table] = (deleted[rule.table] ?? 0) + total;
  }
  return { deleted, unfinished, failures };
}

/**
 * A service's retention sweep: every `intervalMs` (on each replica where it is
 * enabled), one pass over the rules `rules(now)` makes, `now` read from the
 * service's clock once per pass. Replicas may sweep at the same time: the rules'
 * statements share the rows (see RetentionRule). A pass that stopped at its cap
 * with rows left is followed at once by another, so a backlog is worked off in
 * bounded passes instead of one long one. Tests call `sweep()` after moving
 * their clock.
 */
export abstract class RetentionSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger: Logger;
  private readonly task: PeriodicTask;
  // Made with the sweep, not when this file loads: a process starts its metrics before it builds its services.
  private readonly deletedRows = metrics.getMeter('strata-retention').createCounter('strata.retention.deleted', {
    description: 'Rows deleted by retention sweeps, by table (docs/runbooks.md, "Retention")',
  });

  protected constructor(
    private readonly name: string,
    private readonly clock: Clock,
    private readonly schedule: { readonly enabled: boolean; readonly intervalMs: number },
  ) {
    this.logger = new Logger(name);
    this.task = new PeriodicTask(name, schedule.intervalMs, () => this.sweep(), this.logger);
  }

  /** The rules of a pass whose time is `now` (made anew for each pass: a rule may carry a cursor through it). */
  protected abstract rules(now: Date): readonly RetentionRule[];

  onApplicationBootstrap(): void {
    if (this.schedule.enabled) this.task.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** One pass; the rows deleted by table. Rejects (after running every rule) when a rule failed. */
  async sweep(): Promise<RetentionReport> {
    const pass = await runRetentionPass(this.rules(this.clock.now()), {
      onDeleted: (table, n) => this.deletedRows.add(n, { table }),
    });
    if (Object.values(pass.deleted).some((n) => n > 0)) {
      this.logger.log({ msg: `${this.name}: rows past their window deleted`, deleted: pass.deleted });
    }
    if (pass.unfinished.length > 0) this.task.wake();
    if (pass.failures.length > 0) {
      throw new AggregateError(
        pass.failures.map((f) => f.error),
        `${this.name} failed for ${pass.failures.map((f) => f.table).join(', ')}: ${pass.failures
          .map((f) => String(f.error))
          .join('; ')}`,
      );
    }
    return pass.deleted;
  }
}
