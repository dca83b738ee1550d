import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import { Clock } from '@strata/platform';
import { RunsRepository, type OpenRunStatus } from '../runs/runs.repository.js';

/** A run due longer ago than this is overdue: no engine has moved it (docs/runbooks.md). */
export const OVERDUE_AFTER_MS = 60_000;

const OPEN_STATUSES: readonly OpenRunStatus[] = ['pending', 'running', 'waiting'];

/**
 * The orchestration service's instruments (docs/runbooks.md, "Metrics"), read
 * from the runs table when metrics are collected (one statement per
 * collection, none when nobody collects): the runs not ended, and those
 * overdue. No attribute names a workspace or an orchestration.
 */
@Injectable()
export class OrchestrationMetrics implements OnApplicationBootstrap {
  constructor(
    private readonly runs: RunsRepository,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    const meter = metrics.getMeter('strata-orchestration');
    const open = meter.createObservableGauge('strata.orchestration.runs.open', {
      description: 'Runs not ended (pending, running, waiting), by status',
    });
    const overdue = meter.createObservableGauge('strata.orchestration.runs.overdue', {
      description: `Runs not ended whose due time passed more than ${OVERDUE_AFTER_MS / 1000} s ago, by status`,
    });
    meter.addBatchObservableCallback(
      async (result) => {
        let counts: Awaited<ReturnType<RunsRepository['openCounts']>>;
        try {
          counts = await this.runs.openCounts(new Date(this.clock.now().getTime() - OVERDUE_AFTER_MS));
        } catch {
          return; // the database did not answer: this collection has no figure rather than a wrong one
        }
        for (const status of OPEN_STATUSES) {
          const found = counts.find((c) => c.status === status);
          result.observe(open, found?.open ?? 0, { status });
          result.observe(overdue, found?.overdue ?? 0, { status });
        }
      },
      [open, overdue],
    );
  }
}
