import { Injectable } from '@nestjs/common';
import { Transactions } from '@strata/db';
import { ConsumerInterests, NatsConnectionHolder } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';
import {
  OrchestrationInterestsRepository,
  ORCHESTRATION_EVENT_CONSUMER,
} from './orchestration-interests.repository.js';

/**
 * The orchestration service's record-event interests in the data service
 * (docs/events.md, "Routed events"; docs/orchestration.md): an event-driven
 * orchestration that becomes active (created or updated so, or given another
 * collection) widens them before its row is written; a pause, a delete or another
 * trigger narrows them after commit to what the active orchestrations need; the whole
 * set is replaced at start. The mechanism is the shared {@link ConsumerInterests}.
 */
@Injectable()
export class OrchestrationInterests extends ConsumerInterests {
  constructor(
    transactions: Transactions,
    repository: OrchestrationInterestsRepository,
    nats: NatsConnectionHolder,
    config: OrchestrationConfig,
  ) {
    super(transactions, repository, nats, {
      prefix: config.NATS_PREFIX,
      consumer: ORCHESTRATION_EVENT_CONSUMER,
      holder: 'orchestration',
    });
  }
}
