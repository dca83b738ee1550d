import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '@strata/platform';
import type { EndpointRequest, JsonValue } from '@strata/sandbox';
import type { WorkspaceScope } from '@strata/db';
import { RunQueue, type QueuedJob } from '../runs/run-queue.js';
import { SYSTEM_TRIGGER_NAME, TriggersRepository } from '../triggers/triggers.repository.js';
import type { TestFunctionRequest } from './dto/function.requests.js';
import { assertRunnableCode, codeHash } from './function-code.js';
import { MonthlyExecutions } from '../usage/monthly-executions.js';

function testRequest(payload: TestFunctionRequest['params']): EndpointRequest {
  return {
    method: 'POST',
    path: '/endpoints/test',
    query: {},
    headers: {},
    payload: payload as JsonValue,
    auth: { mode: 'test' },
  };
}

/** `POST /compute-functions/test`: the code, checked, queued once with `params` as executionParams. */
@Injectable()
export class FunctionTestsService {
  constructor(
    private readonly queue: RunQueue,
    private readonly triggers: TriggersRepository,
    private readonly clock: Clock,
    private readonly monthly: MonthlyExecutions,
  ) {}

  async test(scope: WorkspaceScope, by: string, body: TestFunctionRequest): Promise<Omit<QueuedJob, 'runId'>> {
    const kind = assertRunnableCode(body.code);
    // A test run is an execution (docs/plans.md): refused 403 QUOTA_EXCEEDED past this month's.
    await this.monthly.ensureRoom(scope);
    const triggerId = await this.triggers.systemTrigger(scope, randomUUID(), this.clock.now());
    const queued = await this.queue.enqueue(scope, {
      target: { kind: 'code', code: body.code, codeHash: codeHash(body.code) },
      triggerId,
      source: 'manual',
      // Endpoint code is tested as a POST of `params` to /endpoints/test, answered in the run's returnValue.
      params: {
        triggerParams: {},
        executionParams: body.params,
        ...(kind === 'endpoint' ? { request: testRequest(body.params) } : {}),
      },
      context: {
        trigger: { id: triggerId, name: SYSTEM_TRIGGER_NAME, executionType: 'on-demand' },
        invocationDepth: 0,
      },
      by,
    });
    return { jobId: queued.jobId, status: queued.status, queuedAt: queued.queuedAt };
  }
}
