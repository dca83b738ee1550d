import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createServiceApp, type Clock } from '@strata/platform';
import type { ComputeConfig } from '../compute.config.js';
import { EndpointCalls } from '../endpoints/endpoint-calls.service.js';
import { endpointRoutes } from '../endpoints/endpoint-routes.js';
import { ENDPOINT_CALL_PATHS } from '../endpoints/endpoints.controller.js';
import { WorkerModule } from './worker.module.js';

/**
 * Starts a sandbox worker in this process: it takes jobs, event runs and
 * endpoint dispatches, and serves endpoint calls and its health on
 * COMPUTE_WORKER_PORT, until `close()`. Logs "worker ready" with its port
 * once all of them are served.
 */
export async function startComputeWorker(config: ComputeConfig, clock?: Clock): Promise<NestExpressApplication> {
  const worker = await createServiceApp(WorkerModule.forRoot(config, clock), {
    name: 'compute-worker',
    config,
    description: 'A sandbox worker: endpoint calls, run on its own isolates',
    defaultErrorShape: () => 'functions',
    rawBodyPaths: ENDPOINT_CALL_PATHS,
    directRoutes: (app) => endpointRoutes(app.get(EndpointCalls)),
  });
  await worker.listen(config.COMPUTE_WORKER_PORT, config.HOST);
  const { port } = worker.getHttpServer().address() as AddressInfo;
  const logger = new Logger('ComputeWorker');
  exitWhenStopOutlasts(config.COMPUTE_WORKER_STOP_MS, logger);
  logger.log({
    msg: 'worker ready',
    port,
    isolates: config.COMPUTE_WORKER_ISOLATES,
    endpointIsolates: config.COMPUTE_WORKER_ENDPOINT_ISOLATES,
  });
  return worker;
}

/**
 * Once the process is asked to stop, gives the graceful stop (runs finished,
 * outcomes written, connections closed) `ms` before the process ends anyway:
 * a worker never outlives its stop because something in it hangs. It ends by
 * SIGKILL: nothing of it is to be flushed by then, and its sandbox processes
 * end themselves when their channel to it closes.
 */
function exitWhenStopOutlasts(ms: number, logger: Logger): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        logger.error({ msg: 'worker did not stop in time; exiting with its runs unfinished', signal, afterMs: ms });
        process.kill(process.pid, 'SIGKILL');
      }, ms).unref();
    });
  }
}
