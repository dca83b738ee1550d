import { Injectable } from '@nestjs/common';
import {
  functionRunStartSubject,
  functionRunStatusSubject,
  type FunctionRunStart,
  type FunctionRunStartReply,
  type FunctionRunStatusReply,
} from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { NatsConnectionHolder } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';

/**
 * Compute steps' runs, through compute (core NATS request/reply): start one, ask
 * how it ended. Throws when compute does not answer; the engine tries again at
 * the run's next due time.
 */
@Injectable()
export class ComputeRuns {
  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: OrchestrationConfig,
  ) {}

  start(scope: WorkspaceScope, s: Omit<FunctionRunStart, 'workspaceSlug'>): Promise<FunctionRunStartReply> {
    return this.ask(functionRunStartSubject(this.config.NATS_PREFIX), { ...s, workspaceSlug: scope.workspace });
  }

  status(scope: WorkspaceScope, runId: string): Promise<FunctionRunStatusReply> {
    return this.ask(functionRunStatusSubject(this.config.NATS_PREFIX), { workspaceSlug: scope.workspace, runId });
  }

  private async ask<T>(subject: string, payload: unknown): Promise<T> {
    const nc = await this.nats.get();
    const msg = await nc.request(subject, JSON.stringify(payload), {
      timeout: this.config.ORCHESTRATION_COMPUTE_TIMEOUT_MS,
    });
    const answer = msg.json<T | { error: string }>();
    // Compute's refusal to answer is `{error: <string>}`; a run's own error is an object under `error`.
    if (typeof answer === 'object' && answer !== null && typeof (answer as { error?: unknown }).error === 'string') {
      throw new Error(`compute: ${(answer as { error: string }).error}`);
    }
    return answer as T;
  }
}
