import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { SandboxEngine } from '@strata/sandbox';
import { ComputeMetrics } from '../metrics/compute-metrics.js';
import { WorkspaceSuspensions } from '../suspensions/workspace-suspensions.js';
import { EndpointServer } from './endpoint-server.js';
import { JobConsumer } from './job-consumer.js';
import { ENDPOINT_SANDBOX_ENGINE, SANDBOX_ENGINE } from './sandbox-engine.provider.js';

/** What a worker reports when its metrics are collected: its engines, the work queues, the endpoint calls waiting, suspensions. */
@Injectable()
export class WorkerMetrics implements OnApplicationBootstrap {
  constructor(
    private readonly metrics: ComputeMetrics,
    @Inject(SANDBOX_ENGINE) private readonly background: SandboxEngine,
    @Inject(ENDPOINT_SANDBOX_ENGINE) private readonly endpoint: SandboxEngine,
    private readonly suspensions: WorkspaceSuspensions,
    private readonly jobs: JobConsumer,
    private readonly endpoints: EndpointServer,
  ) {}

  onApplicationBootstrap(): void {
    this.metrics.observeEngines([
      { name: 'background', stats: () => this.background.stats() },
      { name: 'endpoint', stats: () => this.endpoint.stats() },
    ]);
    this.metrics.observeSuspended(() => this.suspensions.suspendedCount());
    this.metrics.observePendingJobs(() => this.jobs.pendingJobs());
    this.metrics.observeEndpointWaiting(() => this.endpoints.waitingCalls);
  }
}
