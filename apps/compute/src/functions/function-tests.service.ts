import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { RunQueue, type QueuedJob } from '../runs/run-queue.js';
import type { TestFunctionRequest } from './dto/function.requests.js';
import { assertRunnableCode, codeHash } from './function-code.js';

/** The system default trigger's name in a run's context (test runs go through it). */
export const SYSTEM_DEFAULT_TRIGGER = 'system-default';

/** `POST /compute-functions/test`: the code, checked, queued once with `params` as executionParams. */
@Injectable()
export class FunctionTestsService {
  constructor(private readonly queue: RunQueue) {}

  async test(scope: WorkspaceScope, by: string, body: TestFunctionRequest): Promise<Omit<QueuedJob, 'runId'>> {
    assertRunnableCode(body.code);
    const queued = await this.queue.enqueue(scope, {
      target: { kind: 'code', code: body.code, codeHash: codeHash(body.code) },
      triggerId: null,
      source: 'manual',
      params: { triggerParams: {}, executionParams: body.params },
      context: { trigger: { name: SYSTEM_DEFAULT_TRIGGER, executionType: 'on-demand' } },
      by,
    });
    return { jobId: queued.jobId, status: queued.status, queuedAt: queued.queuedAt };
  }
}
