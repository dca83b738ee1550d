import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope, Transactions, type WorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { QueuedJob } from '../runs/run-queue.js';
import type { Schedule } from '../triggers/metadata/index.js';
import { TriggerExecutions } from '../triggers/trigger-executions.service.js';
import { TriggersRepository } from '../triggers/triggers.repository.js';
import { nextDueAfter } from '@strata/schedule';
import { SchedulesRepository } from './schedules.repository.js';

const BATCH = 50;

/**
 * Fires scheduled triggers. Each pass claims due rows (FOR UPDATE SKIP LOCKED) and,
 * in the same transaction, queues each trigger's run and moves its row to the next
 * due time, so any number of replicas fire each occurrence exactly once and a
 * crash before the commit fires nothing (the next pass does). After downtime the
 * occurrence that was due fires once and the missed ones are skipped (@strata/schedule, next-due.ts).
 * Times come from the service's clock.
 */
@Injectable()
export class TriggerScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TriggerScheduler');
  private readonly task: PeriodicTask;

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly triggers: TriggersRepository,
    private readonly executions: TriggerExecutions,
    private readonly transactions: Transactions,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
  ) {
    this.task = new PeriodicTask('trigger scheduler', config.COMPUTE_SCHEDULER_INTERVAL_MS, () => this.fireDue());
  }

  onApplicationBootstrap(): void {
    if (this.config.COMPUTE_SCHEDULER_ENABLED) this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** Fires every occurrence due now; how many runs were queued. */
  async fireDue(): Promise<number> {
    let fired = 0;
    for (;;) {
      const now = this.clock.now();
      const queued: { scope: WorkspaceScope; job: QueuedJob }[] = [];
      const claimed = await this.transactions.run(async (tx) => {
        const due = await this.schedules.claimDue(tx, now, BATCH);
        for (const row of due) {
          // A row this pass claimed from our own table: the trigger is read and run within its workspace.
          const scope = issueWorkspaceScope(row.workspace_slug);
          const found = await this.triggers.findWithFunction(scope, row.trigger_id, tx);
          const trigger = found?.trigger;
          if (!found || !trigger || trigger.paused || trigger.executionType !== 'scheduled') {
            await this.schedules.set(scope, tx, row.trigger_id, null);
            continue;
          }
          const schedule = trigger.metadata as unknown as Schedule;
          try {
            if (!found.fn) throw new Error(`Function not found for trigger: ${trigger.id}`);
            const fn = found.fn;
            // In a savepoint: a run that cannot be queued is skipped, not the batch.
            const job = await this.transactions.savepoint(tx, () =>
              this.executions.runScheduledIn(scope, tx, trigger, fn, row.due_at, now),
            );
            queued.push({ scope, job });
          } catch (err) {
            this.logger.warn({ msg: 'scheduled occurrence not run', triggerId: trigger.id, err: String(err) });
          }
          await this.schedules.set(scope, tx, row.trigger_id, nextDueAfter(schedule, row.due_at, now));
        }
        return due.length;
      });
      // The pass's jobs in one write (a failure is left to the sweep, which publishes queued runs again).
      await this.executions.publishAll(queued);
      fired += queued.length;
      if (claimed < BATCH) return fired;
    }
  }
}
