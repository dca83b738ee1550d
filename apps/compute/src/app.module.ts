import { TriggerInterests } from './triggers/trigger-interests.js';
import { TriggerInterestsRepository } from './triggers/trigger-interests.repository.js';
import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatabaseReadiness, PlatformModule, TransactionsProvider, type Clock } from '@strata/platform';
import { AllowedDomainsController } from './allowed-domains/allowed-domains.controller.js';
import { AllowedDomainsRepository } from './allowed-domains/allowed-domains.repository.js';
import { AllowedDomainsService } from './allowed-domains/allowed-domains.service.js';
import { computeDataSourceOptions } from './compute-data-source.js';
import { ComputeConfig } from './compute.config.js';
import { RunDocumentsController } from './run-documents/run-documents.controller.js';
import { RunDocumentsRepository } from './run-documents/run-documents.repository.js';
import { RunDocumentsService } from './run-documents/run-documents.service.js';
import { EventRunsRepository } from './events/event-runs.repository.js';
import { SchedulesRepository } from './schedules/schedules.repository.js';
import { TriggerScheduler } from './schedules/trigger-scheduler.js';
import { EventRunOffers } from './events/event-run-offers.js';
import { COMPUTE_PROCESS, TriggerEventConsumer } from './events/trigger-event-consumer.js';
import { DraftsController, FunctionDraftsController, TriggerDraftsController } from './drafts/drafts.controller.js';
import { DraftsRepository } from './drafts/drafts.repository.js';
import { DraftsService } from './drafts/drafts.service.js';
import { FunctionDirectory } from './functions/function-directory.js';
import { FunctionRunsDirectory } from './runs/function-runs-directory.js';
import { FunctionTestsService } from './functions/function-tests.service.js';
import { FunctionsController } from './functions/functions.controller.js';
import { FunctionsRepository } from './functions/functions.repository.js';
import { FunctionsService } from './functions/functions.service.js';
import { RunJobs } from './runs/run-jobs.js';
import { WorkspaceBacklogs } from './runs/workspace-backlogs.js';
import { WorkspaceSuspensions } from './suspensions/workspace-suspensions.js';
import { RunQueue } from './runs/run-queue.js';
import { RunRetention } from './runs/run-retention.js';
import { RunRetentionRepository } from './runs/run-retention.repository.js';
import { RunSweeper } from './runs/run-sweeper.js';
import { RunsController } from './runs/runs.controller.js';
import { RunsRepository } from './runs/runs.repository.js';
import { ExecutionBudget } from './runs/execution-budget.js';
import { RerunsService } from './runs/reruns.service.js';
import { RunsService } from './runs/runs.service.js';
import { EndpointSignatureReplays } from './endpoints/endpoint-signature-replays.js';
import { EndpointAuthenticator } from './endpoints/endpoint-authenticator.js';
import { EndpointCalls } from './endpoints/endpoint-calls.service.js';
import { TriggerLookups } from './triggers/trigger-lookups.js';
import { TriggerChanges } from './triggers/trigger-changes.js';
import { EndpointCredentialsRepository } from './endpoints/endpoint-credentials.repository.js';
import { EndpointCredentials } from './endpoints/endpoint-credentials.service.js';
import { EndpointDispatcher } from './endpoints/endpoint-dispatcher.js';
import { EndpointRunner } from './endpoints/endpoint-runner.js';
import { EndpointsController } from './endpoints/endpoints.controller.js';
import { AutoPersistLinks } from './http-triggers/auto-persist-links.js';
import { HttpTriggerDirectory } from './http-triggers/http-trigger-directory.js';
import { DataApi } from './worker/api/data-api.js';
import { FunctionPrincipalTokens } from './worker/function-principal-tokens.js';
import { TriggerExecutions } from './triggers/trigger-executions.service.js';
import { TriggersController } from './triggers/triggers.controller.js';
import { TriggerVersionsController } from './triggers/versions/trigger-versions.controller.js';
import { TriggerVersionsRepository } from './triggers/versions/trigger-versions.repository.js';
import { TriggerVersions } from './triggers/versions/trigger-versions.service.js';
import { TriggersRepository } from './triggers/triggers.repository.js';
import { TriggersService } from './triggers/triggers.service.js';
import { ComputeUsageRepository } from './usage/usage.repository.js';
import { ComputeQuota } from './usage/compute-quota.js';
import { ComputeUsage } from './usage/compute-usage.js';
import { MonthlyExecutions } from './usage/monthly-executions.js';

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
        TypeOrmModule.forRoot(computeDataSourceOptions(config)),
        PlatformModule.forRoot({ config, clock: options.clock }),
      ],
      // AllowedDomainsController, then FunctionsController: `allowed-domains` and `test` before `:id`.
      controllers: [
        AllowedDomainsController,
        FunctionsController,
        FunctionDraftsController,
        TriggersController,
        TriggerVersionsController,
        TriggerDraftsController,
        DraftsController,
        RunsController,
        RunDocumentsController,
        EndpointsController,
      ],
      providers: [
        TransactionsProvider,
        AllowedDomainsRepository,
        AllowedDomainsService,
        RunDocumentsRepository,
        RunDocumentsService,
        TriggersRepository,
        TriggersService,
        TriggerVersionsRepository,
        TriggerVersions,
        TriggerExecutions,
        EndpointCredentialsRepository,
        EndpointCredentials,
        EndpointAuthenticator,
        EndpointSignatureReplays,
        EndpointDispatcher,
        // The API runs no function itself: every endpoint run goes to a worker over NATS.
        { provide: EndpointRunner, useExisting: EndpointDispatcher },
        EndpointCalls,
        TriggerLookups,
        TriggerInterests,
        TriggerInterestsRepository,
        TriggerChanges,
        HttpTriggerDirectory,
        FunctionDirectory,
        ComputeUsageRepository,
        MonthlyExecutions,
        ComputeQuota,
        ComputeUsage,
        FunctionRunsDirectory,
        FunctionPrincipalTokens,
        DataApi,
        AutoPersistLinks,
        EventRunsRepository,
        EventRunOffers,
        // Record events become runs here only when COMPUTE_EVENT_CONSUMERS is `api`.
        { provide: COMPUTE_PROCESS, useValue: 'api' },
        TriggerEventConsumer,
        SchedulesRepository,
        TriggerScheduler,
        FunctionsRepository,
        FunctionsService,
        FunctionTestsService,
        DraftsRepository,
        DraftsService,
        RunsRepository,
        RunsService,
        RerunsService,
        ExecutionBudget,
        RunJobs,
        WorkspaceBacklogs,
        WorkspaceSuspensions,
        RunQueue,
        RunSweeper,
        RunRetentionRepository,
        RunRetention,
        DatabaseReadiness,
      ],
    };
  }
}
