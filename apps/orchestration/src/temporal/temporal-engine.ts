import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
// Types only: the SDK (about 0.8 s to load, with a native library) is imported when this engine starts.
import type { Client, Connection } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { issueWorkspaceScope, Transactions, type WorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';
import { RunEngine } from '../runs/run-engine.js';
import type { RunRow } from '../runs/run-rows.js';
import { RunsRepository } from '../runs/runs.repository.js';
import { RunActivities } from './run-activities.js';
import type { RunRef } from './run-loop.js';

/**
 * The workflow's module, which the worker bundles at start: next to this one in
 * dist/, or in dist/ when this module runs from its sources (under Jest).
 */
export const RUN_WORKFLOW_PATH = [
  fileURLToPath(new URL('./run-workflow.js', import.meta.url)),
  fileURLToPath(new URL('../../dist/temporal/run-workflow.js', import.meta.url)),
].find((path) => existsSync(path))!;

/** How long a run whose workflow could not be started waits before it is tried again. */
const START_RETRY_MS = 5000;

/**
 * The Temporal engine (TEMPORAL_ADDRESS set): one workflow per run, on the
 * task queue TEMPORAL_TASK_QUEUE, and a worker for them in this process.
 *
 * Runs reach Temporal through their rows: a new or retried run is due, and
 * every ORCHESTRATION_ENGINE_INTERVAL_MS (or at once when woken) a replica
 * claims due runs (SKIP LOCKED), starts each one's workflow and clears its due
 * time in the same transaction. The workflow id is the run id and its due time,
 * so a start repeated after a crash finds the workflow it started, and a retry
 * from a step (a new due time) gets a workflow of its own. Nothing is lost when
 * Temporal is down: the run stays due and is started later.
 */
@Injectable()
export class TemporalEngine extends RunEngine implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TemporalEngine');
  private readonly task: PeriodicTask;
  private client: Client | undefined;
  private clientConnection: Connection | undefined;
  private workerConnection: NativeConnection | undefined;
  private worker: Worker | undefined;
  private running: Promise<void> | undefined;
  private isAlreadyStarted: (err: unknown) => boolean = () => false;
  private isNotFound: (err: unknown) => boolean = () => false;

  constructor(
    private readonly runs: RunsRepository,
    private readonly activities: RunActivities,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly config: OrchestrationConfig,
  ) {
    super();
    this.task = new PeriodicTask(
      'TemporalEngine',
      config.ORCHESTRATION_ENGINE_INTERVAL_MS,
      () => this.startDue(),
      this.logger,
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    const address = this.config.TEMPORAL_ADDRESS!;
    const namespace = this.config.TEMPORAL_NAMESPACE;
    const { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } =
      await import('@temporalio/client');
    this.isAlreadyStarted = (err) => err instanceof WorkflowExecutionAlreadyStartedError;
    this.isNotFound = (err) => err instanceof WorkflowNotFoundError;
    this.clientConnection = await Connection.connect({ address });
    this.client = new Client({ connection: this.clientConnection, namespace });
    if (!this.config.ORCHESTRATION_ENGINE_ENABLED) return;
    const { NativeConnection, Worker } = await import('@temporalio/worker');
    this.workerConnection = await NativeConnection.connect({ address });
    this.worker = await Worker.create({
      connection: this.workerConnection,
      namespace,
      taskQueue: this.config.TEMPORAL_TASK_QUEUE,
      workflowsPath: RUN_WORKFLOW_PATH,
      activities: this.activities.bound(),
    });
    this.running = this.worker.run().catch((err: unknown) => {
      this.logger.error({ msg: 'Temporal worker stopped', err: String(err) });
    });
    this.task.start(0);
    this.logger.log({
      msg: 'runs execute on Temporal',
      address,
      namespace,
      taskQueue: this.config.TEMPORAL_TASK_QUEUE,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
    if (this.worker && this.worker.getState() === 'RUNNING') this.worker.shutdown();
    await this.running;
    await this.workerConnection?.close();
    await this.clientConnection?.close();
  }

  wake(): void {
    this.task.wake();
  }

  /** Cancels the run's workflow; a workflow that has ended already is fine. */
  async cancelled(_scope: WorkspaceScope, run: RunRow): Promise<void> {
    if (!this.client || !run.workflow_id) return;
    try {
      await this.client.workflow.getHandle(run.workflow_id).cancel();
    } catch (err) {
      if (!this.isNotFound(err)) {
        // The run is failed in its rows already: its workflow stops at its next activity.
        this.logger.warn({ msg: 'workflow not cancelled', runId: run.id, err: String(err) });
      }
    }
  }

  /** One pass: starts the workflows of up to 20 due runs; how many were due. */
  async startDue(): Promise<number> {
    return this.transactions.run(async (tx) => {
      const due = await this.runs.claimDue(tx, this.clock.now(), 20);
      for (const run of due) {
        // The workspace of a run row this engine claimed.
        const scope = issueWorkspaceScope(run.workspace_slug);
        const workflowId = `${run.id}@${run.due_at!.getTime()}`;
        try {
          await this.startWorkflow(run, workflowId);
          run.workflow_id = workflowId;
          run.due_at = null;
        } catch (err) {
          this.logger.warn({ msg: 'run workflow not started; tried again', runId: run.id, err: String(err) });
          run.due_at = new Date(this.clock.now().getTime() + START_RETRY_MS);
        }
        await this.runs.save(scope, tx, run);
      }
      return due.length;
    });
  }

  private async startWorkflow(run: RunRow, workflowId: string): Promise<void> {
    const ref: RunRef = { workspace: run.workspace_slug, orchestrationId: run.orchestration_id, runId: run.id };
    try {
      await this.client!.workflow.start('orchestrationRun', {
        taskQueue: this.config.TEMPORAL_TASK_QUEUE,
        workflowId,
        args: [ref],
      });
    } catch (err) {
      if (!this.isAlreadyStarted(err)) throw err;
    }
  }
}
