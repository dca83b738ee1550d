import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import { DatabaseReadiness, PlatformModule, TransactionsProvider, type Clock } from '@strata/platform';
import { ComputeConfig } from './compute.config.js';
import { DraftEntity } from './drafts/draft.entity.js';
import { DraftsController, FunctionDraftsController } from './drafts/drafts.controller.js';
import { DraftsRepository } from './drafts/drafts.repository.js';
import { DraftsService } from './drafts/drafts.service.js';
import { FunctionEntity } from './functions/function.entity.js';
import { FunctionVersionEntity } from './functions/function-version.entity.js';
import { FunctionTestsService } from './functions/function-tests.service.js';
import { FunctionsController } from './functions/functions.controller.js';
import { FunctionsRepository } from './functions/functions.repository.js';
import { FunctionsService } from './functions/functions.service.js';
import { COMPUTE_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { RunEntity } from './runs/run.entity.js';
import { RunJobs } from './runs/run-jobs.js';
import { RunQueue } from './runs/run-queue.js';
import { RunSweeper } from './runs/run-sweeper.js';
import { RunsController } from './runs/runs.controller.js';
import { RunsRepository } from './runs/runs.repository.js';
import { RunsService } from './runs/runs.service.js';

export const COMPUTE_ENTITIES = [FunctionEntity, FunctionVersionEntity, DraftEntity, RunEntity];

/** What a compute service is built with besides its settings. */
export interface ComputeAppOptions {
  /** The clock of queue times, leases and the sweeps (the system clock unless given). */
  readonly clock?: Clock;
}

/** The compute API: functions, drafts, test runs and function runs. Sandbox workers are separate processes (worker/). */
@Module({})
export class ComputeAppModule {
  static forRoot(config: ComputeConfig, options: ComputeAppOptions = {}): DynamicModule {
    return {
      module: ComputeAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: COMPUTE_SCHEMA,
            entities: COMPUTE_ENTITIES,
            migrations: MIGRATIONS,
          }),
        ),
        PlatformModule.forRoot({ config, clock: options.clock }),
      ],
      // FunctionsController first: `test` is matched before `:id`.
      controllers: [FunctionsController, FunctionDraftsController, DraftsController, RunsController],
      providers: [
        TransactionsProvider,
        FunctionsRepository,
        FunctionsService,
        FunctionTestsService,
        DraftsRepository,
        DraftsService,
        RunsRepository,
        RunsService,
        RunJobs,
        RunQueue,
        RunSweeper,
        DatabaseReadiness,
      ],
    };
  }
}
