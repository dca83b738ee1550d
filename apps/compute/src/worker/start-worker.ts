import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import type { Clock } from '@strata/platform';
import { JsonLogger } from '@strata/telemetry';
import type { ComputeConfig } from '../compute.config.js';
import { WorkerModule } from './worker.module.js';

/** Starts a sandbox worker in this process: it takes jobs until `close()`. */
export async function startComputeWorker(config: ComputeConfig, clock?: Clock): Promise<INestApplicationContext> {
  const worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, clock), {
    logger: new JsonLogger('compute-worker', config.LOG_LEVEL),
  });
  worker.enableShutdownHooks();
  await worker.init();
  return worker;
}
