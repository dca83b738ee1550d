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

/** Room left in a NATS message for its subject, reply inbox and headers. */
const MESSAGE_OVERHEAD_BYTES = 4096;

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

  /**
   * Starts a step's function run. Parameters larger than a NATS message can
   * carry are refused at once (the step fails with PARAMETERS_TOO_LARGE):
   * before, the request failed the same way at every try and the run stayed
   * `running` for ever.
   */
  async start(scope: WorkspaceScope, s: Omit<FunctionRunStart, 'workspaceSlug'>): Promise<FunctionRunStartReply> {
    const payload = JSON.stringify({ ...s, workspaceSlug: scope.workspace });
    const bytes = Buffer.byteLength(payload);
    const limit = ((await this.nats.get()).info?.max_payload ?? 1024 * 1024) - MESSAGE_OVERHEAD_BYTES;
    if (bytes > limit) {
      return {
        started: false,
        code: 'PARAMETERS_TOO_LARGE',
        reason: `The step's parameters (its input and the steps' outputs) are ${bytes} bytes of JSON; a compute step takes at most ${limit}`,
      };
    }
    return this.ask(functionRunStartSubject(this.config.NATS_PREFIX), payload);
  }

  status(scope: WorkspaceScope, runId: string): Promise<FunctionRunStatusReply> {
    return this.ask(functionRunStatusSubject(this.config.NATS_PREFIX), { workspaceSlug: scope.workspace, runId });
  }

  private async ask<T>(subject: string, payload: unknown): Promise<T> {
    const nc = await this.nats.get();
    const msg = await nc.request(subject, typeof payload === 'string' ? payload : JSON.stringify(payload), {
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
