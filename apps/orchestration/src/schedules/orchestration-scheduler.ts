import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { nextDueAfter, nextScheduledTime, type Schedule } from '@strata/schedule';
import { OrchestrationConfig } from '../orchestration.config.js';
import type { OrchestrationEntity } from '../orchestrations/orchestration.entity.js';
import { OrchestrationsRepository } from '../orchestrations/orchestrations.repository.js';
import { RunsService } from '../runs/runs.service.js';
import { SchedulesRepository } from './schedules.repository.js';

/** The schedule of an active scheduled orchestration, or undefined. */
export function scheduleOf(o: Pick<OrchestrationEntity, 'status' | 'trigger'>): Schedule | undefined {
  const t = o.trigger;
  if (o.status !== 'active' || t.type !== 'scheduled') return undefined;
  if (t.scheduleType === 'cron' && t.cronExpression) {
    return { scheduleType: 'cron', cronExpression: t.cronExpression, timezone: t.timezone ?? 'UTC' };
  }
  if (t.scheduleType === 'once' && t.scheduledAt) {
    return { scheduleType: 'once', scheduledAt: t.scheduledAt, timezone: t.timezone ?? 'UTC' };
  }
  return t.interval ? { scheduleType: 'interval', interval: t.interval } : undefined;
}

/**
 * Scheduled orchestration triggers, by the rules of scheduled function triggers
 * (`@strata/schedule`): every replica looks for due rows every
 * ORCHESTRATION_SCHEDULER_INTERVAL_MS, claims them with SKIP LOCKED and, in the
 * same transaction, starts the run and moves the row to its next due time (the
 * occurrence that was due fires once; missed ones are skipped). So any number of
 * replicas start each occurrence exactly once.
 */
@Injectable()
export class OrchestrationScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OrchestrationScheduler');
  private readonly task: PeriodicTask;

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly orchestrations: OrchestrationsRepository,
    private readonly runs: RunsService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly config: OrchestrationConfig,
  ) {
    this.task = new PeriodicTask(
      'OrchestrationScheduler',
      config.ORCHESTRATION_SCHEDULER_INTERVAL_MS,
      () => this.tick(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    if (this.config.ORCHESTRATION_ENGINE_ENABLED) this.task.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** Puts an orchestration's next due time (from now) on the list, or takes it off; in the transaction that changes it. */
  async reschedule(scope: WorkspaceScope, tx: Tx, o: OrchestrationEntity): Promise<void> {
    const schedule = scheduleOf(o);
    await this.schedules.set(scope, tx, o.id, schedule ? nextScheduledTime(schedule, this.clock.now()) : null);
  }

  async tick(): Promise<number> {
    return this.transactions.run(async (tx) => {
      const now = this.clock.now();
      const due = await this.schedules.claimDue(tx, now, 50);
      for (const row of due) {
        // The workspace of a due row the scheduler claimed.
        const scope = issueWorkspaceScope(row.workspace_slug);
        const orchestration = await this.orchestrations.find(scope, row.orchestration_id, tx);
        const schedule = orchestration ? scheduleOf(orchestration) : undefined;
        if (!orchestration || !schedule) {
          await this.schedules.set(scope, tx, row.orchestration_id, null);
          continue;
        }
        await this.runs.create(scope, orchestration, {
          input: { scheduledFor: row.due_at.toISOString(), firedAt: now.toISOString() },
          correlationId: null,
          triggerType: 'scheduled',
          triggerMetadata: { scheduleId: orchestration.id, scheduledFor: row.due_at.toISOString() },
          tx,
        });
        await this.schedules.set(scope, tx, orchestration.id, nextDueAfter(schedule, row.due_at, now));
      }
      return due.length;
    });
  }
}
