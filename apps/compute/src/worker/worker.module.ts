import { TriggerInterests } from '../triggers/trigger-interests.js';
import { TriggerInterestsRepository } from '../triggers/trigger-interests.repository.js';
import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatabaseReadiness, PlatformModule, systemClock, TransactionsProvider, type Clock } from '@strata/platform';
import { computeDataSourceOptions } from '../compute-data-source.js';
import { EventRunsRepository } from '../events/event-runs.repository.js';
import { ComputeConfig } from '../compute.config.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { ExecutionBudget } from '../runs/execution-budget.js';
import { RunJobs } from '../runs/run-jobs.js';
import { WorkspaceBacklogs } from '../runs/workspace-backlogs.js';
import { WorkspaceSuspensions } from '../suspensions/workspace-suspensions.js';
import { RunQueue } from '../runs/run-queue.js';
import { RunsRepository } from '../runs/runs.repository.js';
import { RunOutcomesRepository } from '../runs/run-outcomes.repository.js';
import { TriggerExecutions } from '../triggers/trigger-executions.service.js';
import { TriggersRepository } from '../triggers/triggers.repository.js';
import { AllowedDomainsRepository } from '../allowed-domains/allowed-domains.repository.js';
import { RunDocumentsRepository } from '../run-documents/run-documents.repository.js';
import { DataApi } from './api/data-api.js';
import { HttpEgress } from './api/http-egress.js';
import { FunctionPrincipalPermissions } from './api/function-principal-permissions.js';
import { RunApi } from './api/run-api.js';
import { FunctionPrincipalTokens } from './function-principal-tokens.js';
import { WorkspaceCreators } from './workspace-creators.js';
import { JobConsumer } from './job-consumer.js';
import { RunExecutor } from './run-executor.js';
import { EndpointServer } from './endpoint-server.js';
import { EventRunServer } from './event-run-server.js';
import { LocalFirstEndpointRunner } from './local-first-endpoint-runner.js';
import { LocalFirstEventRunOffers } from './local-first-event-run-offers.js';
import { EventRunOffers } from '../events/event-run-offers.js';
import { COMPUTE_PROCESS, TriggerEventConsumer } from '../events/trigger-event-consumer.js';
import { EndpointAuthenticator } from '../endpoints/endpoint-authenticator.js';
import { EndpointCalls } from '../endpoints/endpoint-calls.service.js';
import { EndpointCredentialsRepository } from '../endpoints/endpoint-credentials.repository.js';
import { EndpointCredentials } from '../endpoints/endpoint-credentials.service.js';
import { EndpointDispatcher } from '../endpoints/endpoint-dispatcher.js';
import { EndpointRunner } from '../endpoints/endpoint-runner.js';
import { EndpointSignatureReplays } from '../endpoints/endpoint-signature-replays.js';
import { EndpointsController } from '../endpoints/endpoints.controller.js';
import { TriggerChanges } from '../triggers/trigger-changes.js';
import { TriggerLookups } from '../triggers/trigger-lookups.js';
import { EndpointSandboxEngineProvider, SandboxEngineProvider } from './sandbox-engine.provider.js';
import { ComputeMetrics } from '../metrics/compute-metrics.js';
import { WorkerMetrics } from './worker-metrics.js';
import { RunWrites } from './run-writes/run-writes.js';
import { ComputeUsageRepository } from '../usage/usage.repository.js';
import { MonthlyExecutions } from '../usage/monthly-executions.js';

/**
 * A sandbox worker: the job consumer, the executor and the engine, the record
 * events of event-driven triggers (COMPUTE_EVENT_CONSUMERS), and the one public
 * route whose calls wait for a function, `/endpoints/{path}`, both run on its
 * own isolates with no hop to another process, besides its health. It
 * runs in a process of its own (`main.js worker`), so a runaway isolate or a
 * crash in native code never takes the API down.
 */
@Module({})
export class WorkerModule {
  static forRoot(config: ComputeConfig, clock: Clock = systemClock): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        TypeOrmModule.forRoot(
          computeDataSourceOptions(
            config,
            config.COMPUTE_WORKER_ISOLATES + config.COMPUTE_WORKER_ENDPOINT_ISOLATES + 2,
          ),
        ),
        PlatformModule.forRoot({ config, clock }),
      ],
      controllers: [EndpointsController],
      providers: [
        DatabaseReadiness,
        FunctionsRepository,
        RunsRepository,
        RunOutcomesRepository,
        RunWrites,
        SandboxEngineProvider,
        EndpointSandboxEngineProvider,
        FunctionPrincipalTokens,
        WorkspaceCreators,
        TriggersRepository,
        TriggerExecutions,
        RunJobs,
        WorkspaceBacklogs,
        WorkspaceSuspensions,
        RunQueue,
        EventRunsRepository,
        TransactionsProvider,
        ExecutionBudget,
        ComputeUsageRepository,
        MonthlyExecutions,
        AllowedDomainsRepository,
        RunDocumentsRepository,
        HttpEgress,
        DataApi,
        RunApi,
        FunctionPrincipalPermissions,
        RunExecutor,
        EndpointServer,
        EventRunServer,
        JobConsumer,
        ComputeMetrics,
        WorkerMetrics,
        TriggerChanges,
        TriggerLookups,
        TriggerInterests,
        TriggerInterestsRepository,
        EndpointCredentialsRepository,
        EndpointCredentials,
        EndpointSignatureReplays,
        EndpointAuthenticator,
        EndpointDispatcher,
        { provide: EndpointRunner, useClass: LocalFirstEndpointRunner },
        EndpointCalls,
        // Record events become runs here when COMPUTE_EVENT_CONSUMERS is `worker` (the default).
        { provide: COMPUTE_PROCESS, useValue: 'worker' },
        { provide: EventRunOffers, useClass: LocalFirstEventRunOffers },
        TriggerEventConsumer,
      ],
    };
  }
}
