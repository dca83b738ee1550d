import { Injectable } from '@nestjs/common';
import type { EndpointDispatch } from '@strata/contracts';
import { EndpointDispatcher } from '../endpoints/endpoint-dispatcher.js';
import { EndpointRunner, type DispatchResult, type EndpointCaller } from '../endpoints/endpoint-runner.js';
import { EndpointServer } from './endpoint-server.js';

/**
 * A worker's way to run the endpoint calls it took itself: on its own
 * isolates, with no hop between processes; when they are all busy, over NATS
 * to a worker that has one free; when none has, in this worker's queue until
 * one of its isolates frees (503 past the queue's limits or wait).
 */
@Injectable()
export class LocalFirstEndpointRunner extends EndpointRunner {
  constructor(
    private readonly here: EndpointServer,
    private readonly elsewhere: EndpointDispatcher,
  ) {
    super();
  }

  async dispatch(dispatch: EndpointDispatch, waitMs: number, caller?: EndpointCaller): Promise<DispatchResult> {
    const now = this.here.runHere(dispatch, waitMs);
    if (now) return now;
    const there = await this.elsewhere.dispatch(dispatch, waitMs);
    return there.kind === 'unavailable' ? this.here.runWhenFree(dispatch, waitMs, caller) : there;
  }
}
