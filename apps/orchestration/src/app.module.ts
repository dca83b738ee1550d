import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import { DatabaseReadiness, PlatformModule, TransactionsProvider, type Clock } from '@strata/platform';
import { ComputeFunctions } from './functions/compute-functions.js';
import { ComputeRuns } from './functions/compute-runs.js';
import { OrchestrationEventConsumer } from './events/orchestration-event-consumer.js';
import { OrchestrationScheduler } from './schedules/orchestration-scheduler.js';
import { SchedulesRepository } from './schedules/schedules.repository.js';
import { FunctionRunEnds } from './functions/function-run-ends.js';
import { EmbeddedEngine } from './runs/embedded-engine.js';
import { RunEngine } from './runs/run-engine.js';
import { RunActivities } from './temporal/run-activities.js';
import { TemporalEngine } from './temporal/temporal-engine.js';
import { RunRetention } from './runs/run-retention.js';
import { RunsController } from './runs/runs.controller.js';
import { RunEndings } from './runs/run-endings.js';
import { RunsRepository } from './runs/runs.repository.js';
import { OrchestrationMetrics } from './metrics/orchestration-metrics.js';
import { RunsService } from './runs/runs.service.js';
import { WebhookRuns } from './webhooks/webhook-runs.service.js';
import { WebhooksController } from './webhooks/webhooks.controller.js';
import { ORCHESTRATION_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { OrchestrationConfig } from './orchestration.config.js';
import { OrchestrationEntity } from './orchestrations/orchestration.entity.js';
import { OrchestrationsController } from './orchestrations/orchestrations.controller.js';
import { OrchestrationsRepository } from './orchestrations/orchestrations.repository.js';
import { OrchestrationsService } from './orchestrations/orchestrations.service.js';
import { OrchestrationInterests } from './orchestrations/orchestration-interests.js';
import { OrchestrationInterestsRepository } from './orchestrations/orchestration-interests.repository.js';
import { OrchestrationUsageRepository } from './usage/usage.repository.js';
import { OrchestrationUsage } from './usage/orchestration-usage.js';

/** What an orchestration service is built with besides its settings. */
export interface OrchestrationAppOptions {
  readonly clock?: Clock;
}

export const ORCHESTRATION_ENTITIES = [OrchestrationEntity];

@Module({})
export class OrchestrationAppModule {
  static forRoot(config: OrchestrationConfig, options: OrchestrationAppOptions = {}): DynamicModule {
    // Temporal when TEMPORAL_ADDRESS is set, else the embedded engine; only the chosen one is built.
    const engine = config.TEMPORAL_ADDRESS ? TemporalEngine : EmbeddedEngine;
    return {
      module: OrchestrationAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: ORCHESTRATION_SCHEMA,
            entities: ORCHESTRATION_ENTITIES,
            migrations: MIGRATIONS,
          }),
        ),
        PlatformModule.forRoot({ config, clock: options.clock }),
      ],
      controllers: [OrchestrationsController, RunsController, WebhooksController],
      providers: [
        TransactionsProvider,
        OrchestrationsRepository,
        OrchestrationsService,
        OrchestrationInterests,
        OrchestrationInterestsRepository,
        OrchestrationUsageRepository,
        OrchestrationUsage,
        ComputeFunctions,
        ComputeRuns,
        FunctionRunEnds,
        RunsRepository,
        RunEndings,
        OrchestrationMetrics,
        engine,
        { provide: RunEngine, useExisting: engine },
        RunActivities,
        RunRetention,
        RunsService,
        WebhookRuns,
        OrchestrationEventConsumer,
        SchedulesRepository,
        OrchestrationScheduler,
        DatabaseReadiness,
      ],
    };
  }
}
