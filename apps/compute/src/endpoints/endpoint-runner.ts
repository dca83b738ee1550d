import type { EndpointDispatch, EndpointReply } from '@strata/contracts';

/** How an endpoint run ended: a worker's answer, no worker free (`unavailable`), or no answer in time. */
export type DispatchResult = Exclude<EndpointReply, { kind: 'busy' }> | { kind: 'unavailable' } | { kind: 'timeout' };

/**
 * Where an endpoint call's run goes once the call is let in. The compute API
 * hands it to a worker over NATS (EndpointDispatcher); a worker serving the
 * call itself runs it on one of its own isolates, and hands it on only when
 * they are all busy (worker/LocalFirstEndpointRunner).
 */
export abstract class EndpointRunner {
  /** Runs `dispatch` and answers within about `waitMs`; never queues it. */
  abstract dispatch(dispatch: EndpointDispatch, waitMs: number): Promise<DispatchResult>;
}
