import type { EndpointDispatch, EndpointReply } from '@strata/contracts';

/** How an endpoint run ended: a worker's answer, no worker free (`unavailable`), or no answer in time. */
export type DispatchResult = Exclude<EndpointReply, { kind: 'busy' }> | { kind: 'unavailable' } | { kind: 'timeout' };

/** The caller of an endpoint call, as far as a run waiting for an isolate needs it: whether it went away. */
export interface EndpointCaller {
  /** Calls `listener` once the caller's connection closes before its answer; answers how to stop listening. */
  onGone(listener: () => void): () => void;
}

/**
 * Where an endpoint call's run goes once the call is let in. The compute API
 * hands it to a worker over NATS (EndpointDispatcher); a worker serving the
 * call itself runs it on one of its own isolates, hands it on when they are
 * all busy, and with no worker free has it wait for one of its own
 * (worker/LocalFirstEndpointRunner).
 */
export abstract class EndpointRunner {
  /**
   * Runs `dispatch` and answers within about `waitMs` (a wait for an isolate
   * included); `unavailable` when no isolate could take it within the queue's
   * limits, or its `caller` went away while it waited (nothing ran).
   */
  abstract dispatch(dispatch: EndpointDispatch, waitMs: number, caller?: EndpointCaller): Promise<DispatchResult>;
}
