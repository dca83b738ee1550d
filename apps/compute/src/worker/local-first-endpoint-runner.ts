import { Injectable } from '@nestjs/common';
import type { EndpointDispatch } from '@strata/contracts';
import { EndpointDispatcher } from '../endpoints/endpoint-dispatcher.js';
import { EndpointRunner, type DispatchResult } from '../endpoints/endpoint-runner.js';
import { EndpointServer } from './endpoint-server.js';

/**
 * A worker's way to run the endpoint calls it took itself: on its own
 * isolates, with no hop between processes; when they are all busy, over NATS
 * to a worker that has one free (503 when none has).
 */
@Injectable()
export class LocalFirstEndpointRunner extends EndpointRunner {
  constructor(
    private readonly here: EndpointServer,
    private readonly elsewhere: EndpointDispatcher,
  ) {
    super();
  }

  dispatch(dispatch: EndpointDispatch, waitMs: number): Promise<DispatchResult> {
    return this.here.runHere(dispatch, waitMs) ?? this.elsewhere.dispatch(dispatch, waitMs);
  }
}
