import { Injectable } from '@nestjs/common';
import { RequestError, TimeoutError } from '@nats-io/transport-node';
import { ErrorCode, functionsExistSubject, type FunctionsExistReply } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { NatsConnectionHolder, StrataException } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';

/** Asks compute (core NATS request/reply) which function ids name live functions of a workspace. */
@Injectable()
export class ComputeFunctions {
  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: OrchestrationConfig,
  ) {}

  /** Which of `ids` name live functions of the workspace, and which of those are endpoint code. */
  async existing(
    scope: WorkspaceScope,
    ids: readonly string[],
  ): Promise<{ existing: Set<string>; endpoints: Set<string> }> {
    if (ids.length === 0) return { existing: new Set(), endpoints: new Set() };
    const nc = await this.nats.get();
    let reply: FunctionsExistReply | { error: string };
    try {
      const msg = await nc.request(
        functionsExistSubject(this.config.NATS_PREFIX),
        JSON.stringify({ workspaceSlug: scope.workspace, ids: [...new Set(ids)] }),
        { timeout: this.config.ORCHESTRATION_COMPUTE_TIMEOUT_MS },
      );
      reply = msg.json<FunctionsExistReply | { error: string }>();
    } catch (err) {
      if ((err instanceof RequestError && err.isNoResponders()) || err instanceof TimeoutError) throw unavailable();
      throw err;
    }
    if ('error' in reply) throw unavailable();
    return { existing: new Set(reply.existing), endpoints: new Set(reply.endpoints ?? []) };
  }
}

function unavailable(): StrataException {
  return new StrataException(
    ErrorCode.UNAVAILABLE,
    'The compute service did not answer whether the steps’ functions exist; try again shortly.',
    undefined,
    { 'Retry-After': '1' },
  );
}
