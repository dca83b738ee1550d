import { Injectable } from '@nestjs/common';
import { RequestError, TimeoutError } from '@nats-io/transport-node';
import { computeEndpointSubject, type EndpointDispatch, type EndpointReply } from '@strata/contracts';
import { injectTraceContext } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { EndpointRunner, type DispatchResult } from './endpoint-runner.js';

/** A worker that answers busy was full when the call reached it; another may not be. */
const ATTEMPTS = 3;

/**
 * Hands an endpoint run to a worker with a free isolate, over NATS request/reply
 * on the endpoint queue group. No member (every worker full, or none running) is
 * NATS's "no responders": the call is refused at once, never queued.
 */
@Injectable()
export class EndpointDispatcher extends EndpointRunner {
  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ComputeConfig,
  ) {
    super();
  }

  async dispatch(dispatch: EndpointDispatch, waitMs: number): Promise<DispatchResult> {
    const nc = await this.nats.get();
    const subject = computeEndpointSubject(this.config.NATS_PREFIX);
    const deadline = performance.now() + waitMs;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const remaining = Math.max(1, Math.round(deadline - performance.now()));
      let answer: EndpointReply;
      try {
        const msg = await nc.request(subject, JSON.stringify(dispatch), {
          timeout: remaining,
          headers: injectTraceContext(),
        });
        answer = msg.json<EndpointReply>();
      } catch (err) {
        if (err instanceof RequestError && err.isNoResponders()) return { kind: 'unavailable' };
        if (err instanceof TimeoutError) return { kind: 'timeout' };
        throw err;
      }
      if (answer.kind !== 'busy') return answer;
    }
    return { kind: 'unavailable' };
  }
}
