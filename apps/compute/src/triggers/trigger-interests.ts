import { Injectable } from '@nestjs/common';
import { Transactions } from '@strata/db';
import { ConsumerInterests, NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { TriggerInterestsRepository, COMPUTE_EVENT_CONSUMER } from './trigger-interests.repository.js';

/**
 * Compute's record-event interests in the data service (docs/events.md, "Routed
 * events"; docs/compute.md): an event-driven trigger that starts watching a collection
 * (created, resumed, given another collection) widens them before its row is written;
 * a pause, a delete or another collection narrows them after commit to what the live,
 * unpaused triggers need; the processes that consume the events replace the whole set
 * at start. The mechanism is the shared {@link ConsumerInterests}.
 */
@Injectable()
export class TriggerInterests extends ConsumerInterests {
  constructor(
    transactions: Transactions,
    repository: TriggerInterestsRepository,
    nats: NatsConnectionHolder,
    config: ComputeConfig,
  ) {
    super(transactions, repository, nats, {
      prefix: config.NATS_PREFIX,
      consumer: COMPUTE_EVENT_CONSUMER,
      holder: 'trigger',
    });
  }
}
