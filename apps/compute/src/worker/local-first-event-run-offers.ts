import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { EventRunOffers } from '../events/event-run-offers.js';
import type { NewRun } from '../runs/runs.repository.js';
import { EventRunServer } from './event-run-server.js';

/**
 * A worker's way to start the event runs its own consumer takes: on its own
 * background isolates, with no hop between processes; when none is free,
 * offered to the other workers over NATS, and queued when none takes it.
 */
@Injectable()
export class LocalFirstEventRunOffers extends EventRunOffers {
  constructor(
    nats: NatsConnectionHolder,
    config: ComputeConfig,
    private readonly here: EventRunServer,
  ) {
    super(nats, config);
  }

  override offer(scope: WorkspaceScope, run: NewRun, eventId: string): Promise<boolean> {
    return this.here.runHere(scope, run, eventId) ?? super.offer(scope, run, eventId);
  }
}
