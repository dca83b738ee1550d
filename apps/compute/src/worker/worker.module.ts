import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  Clock,
  NatsConnectionHolder,
  NatsKvRateLimitStore,
  RateLimitStore,
  ServiceConfig,
  systemClock,
  TransactionsProvider,
} from '@strata/platform';
import { computeDataSourceOptions } from '../compute-data-source.js';
import { EventRunsRepository } from '../events/event-runs.repository.js';
import { ComputeConfig } from '../compute.config.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { ExecutionBudget } from '../runs/execution-budget.js';
import { RunJobs } from '../runs/run-jobs.js';
import { RunQueue } from '../runs/run-queue.js';
import { RunsRepository } from '../runs/runs.repository.js';
import { TriggerExecutions } from '../triggers/trigger-executions.service.js';
import { TriggersRepository } from '../triggers/triggers.repository.js';
import { AllowedDomainsRepository } from '../allowed-domains/allowed-domains.repository.js';
import { RunDocumentsRepository } from '../run-documents/run-documents.repository.js';
import { DataApi } from './api/data-api.js';
import { HttpEgress } from './api/http-egress.js';
import { RunApi } from './api/run-api.js';
import { FunctionPrincipalTokens } from './function-principal-tokens.js';
import { JobConsumer } from './job-consumer.js';
import { RunExecutor } from './run-executor.js';
import { EndpointServer } from './endpoint-server.js';
import { EventRunServer } from './event-run-server.js';
import { EndpointSandboxEngineProvider, SandboxEngineProvider } from './sandbox-engine.provider.js';

/**
 * A sandbox worker: no HTTP API, only the job consumer, the executor and the
 * engine. It runs in a process of its own (`main.js worker`), so a runaway
 * isolate or a crash in native code never takes the API down.
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
      ],
      providers: [
        { provide: ComputeConfig, useValue: config },
        { provide: ServiceConfig, useValue: config },
        { provide: Clock, useValue: clock },
        NatsConnectionHolder,
        FunctionsRepository,
        RunsRepository,
        SandboxEngineProvider,
        EndpointSandboxEngineProvider,
        FunctionPrincipalTokens,
        TriggersRepository,
        TriggerExecutions,
        RunJobs,
        RunQueue,
        EventRunsRepository,
        TransactionsProvider,
        { provide: RateLimitStore, useClass: NatsKvRateLimitStore },
        ExecutionBudget,
        AllowedDomainsRepository,
        RunDocumentsRepository,
        HttpEgress,
        DataApi,
        RunApi,
        RunExecutor,
        // Before the job consumer, whose bootstrap says "worker ready": endpoint calls are served by then.
        EndpointServer,
        EventRunServer,
        JobConsumer,
      ],
    };
  }
}
