import { Injectable } from '@nestjs/common';
import { metrics, type Attributes, type ObservableResult } from '@opentelemetry/api';
import type { SandboxStats } from '@strata/sandbox';
import type { ExecutionSource, RunStatus } from '../runs/run-status.js';

/** Seconds: from a trivial run's few milliseconds to a 15-minute function. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/** One run a worker finished, as its record says. */
export interface EndedRun {
  readonly status: RunStatus;
  readonly executionSource: ExecutionSource;
  readonly queuedAt: Date;
  /** When it had its isolate; absent for a run refused before it had one. */
  readonly startedAt: Date | undefined;
  readonly finishedAt: Date;
}

/**
 * The compute service's own instruments (docs/runbooks.md, "Metrics"). They
 * are OpenTelemetry's no-ops until the process collects metrics (METRICS_PORT
 * or an OTLP endpoint), so recording costs nothing otherwise. No attribute
 * names a workspace: a platform has as many as it has tenants, and per-tenant
 * figures are in the runs themselves (`GET /function-runs`).
 */
@Injectable()
export class ComputeMetrics {
  private readonly meter = metrics.getMeter('strata-compute');
  // Histograms carry their unit in the name, as Prometheus names them (the exporter does not add it).
  private readonly ended = this.meter.createCounter('strata.compute.runs.ended', {
    description: 'Runs whose outcome was written, by status and executionSource',
  });
  private readonly duration = this.meter.createHistogram('strata.compute.run.duration_seconds', {
    description: 'From a run having its isolate to its end, by status',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  private readonly queueWait = this.meter.createHistogram('strata.compute.run.queue_wait_seconds', {
    description: 'From a run being queued to it having its isolate, by executionSource',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });

  /** Counts a run whose outcome this worker wrote (once per run: the write that ended it). */
  runEnded(run: EndedRun): void {
    const attributes: Attributes = { status: run.status, execution_source: run.executionSource };
    this.ended.add(1, attributes);
    if (run.startedAt === undefined) return;
    this.duration.record(seconds(run.startedAt, run.finishedAt), { status: run.status });
    this.queueWait.record(seconds(run.queuedAt, run.startedAt), { execution_source: run.executionSource });
  }

  /** The isolates of each sandbox engine, read when metrics are collected. */
  observeEngines(engines: readonly { readonly name: string; stats(): SandboxStats }[]): void {
    const each = (read: (stats: SandboxStats) => number) => (result: ObservableResult) => {
      for (const engine of engines) result.observe(read(engine.stats()), { engine: engine.name });
    };
    this.meter
      .createObservableGauge('strata.compute.isolates', { description: 'Isolates an engine holds now' })
      .addCallback(each((s) => s.isolates));
    this.meter
      .createObservableGauge('strata.compute.isolates.busy', { description: 'Isolates running a run now' })
      .addCallback(each((s) => s.busy));
    this.meter
      .createObservableGauge('strata.compute.runs.waiting', {
        description: 'Runs a worker took that wait for a free isolate',
      })
      .addCallback(each((s) => s.queued));
    this.meter
      .createObservableCounter('strata.compute.isolates.created', { description: 'Isolates an engine has made' })
      .addCallback(each((s) => s.isolatesCreated));
    // Sandbox processes (docs/sandbox.md, "Sandbox processes"): the engines of a worker have them.
    this.meter
      .createObservableCounter('strata.compute.isolates.lost', {
        description: 'Isolates V8 lost (memory bombs): each cost its sandbox process, which was replaced',
      })
      .addCallback(each((s) => s.processes?.isolatesLost ?? 0));
    this.meter
      .createObservableCounter('strata.compute.sandbox.crashes', {
        description: 'Sandbox processes that ended without being asked to (a native crash, the OOM killer)',
      })
      .addCallback(each((s) => s.processes?.crashed ?? 0));
    this.meter
      .createObservableGauge('strata.compute.sandbox.draining', {
        description: 'Sandbox processes that lost an isolate and still finish their other runs',
      })
      .addCallback(each((s) => s.processes?.draining ?? 0));
  }

  /** Workspaces suspended after lost isolates (docs/compute.md, "Suspended workspaces"), read when collected. */
  observeSuspended(count: () => number): void {
    this.meter
      .createObservableGauge('strata.compute.workspaces.suspended', {
        description: 'Workspaces whose runs are refused after lost isolates',
      })
      .addCallback((result) => result.observe(count()));
  }

  /** Endpoint calls a worker holds waiting for an isolate (docs/compute.md, "When every isolate is busy"). */
  observeEndpointWaiting(count: () => number): void {
    this.meter
      .createObservableGauge('strata.compute.endpoint.waiting', {
        description: 'Endpoint calls waiting in the worker for an isolate',
      })
      .addCallback((result) => result.observe(count()));
  }

  /**
   * Jobs in the work queues that no worker holds yet, per lane (`jobs`,
   * `backlog`), read when metrics are collected: `read` asks JetStream, and a
   * lane it cannot answer for is left out of that collection.
   */
  observePendingJobs(read: () => Promise<readonly { readonly lane: string; readonly pending: number }[]>): void {
    const gauge = this.meter.createObservableGauge('strata.compute.jobs.pending', {
      description: 'Jobs in the work queue not yet taken by a worker, per lane',
    });
    this.meter.addBatchObservableCallback(
      async (result) => {
        try {
          for (const { lane, pending } of await read()) result.observe(gauge, pending, { lane });
        } catch {
          // NATS did not answer: this collection has no figure rather than a wrong one
        }
      },
      [gauge],
    );
  }
}

function seconds(from: Date, to: Date): number {
  return Math.max(0, to.getTime() - from.getTime()) / 1000;
}
