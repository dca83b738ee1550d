import { Injectable } from '@nestjs/common';
import { Transactions } from '@strata/db';
import { ConsumerInterests, NatsConnectionHolder } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';
import { SubscriptionInterestsRepository, WEBHOOKS_EVENT_CONSUMER } from './subscription-interests.repository.js';

/**
 * The webhooks service's record-event interests in the data service (docs/events.md,
 * "Routed events"; docs/webhooks.md): a subscription that starts taking events (created
 * active, resumed, given other collections; none named: every collection) widens them
 * before its row is written; a pause, a delete or fewer collections narrows them after
 * commit to what the live subscriptions need; the whole set is replaced at start. The
 * mechanism is the shared {@link ConsumerInterests}.
 */
@Injectable()
export class SubscriptionInterests extends ConsumerInterests {
  constructor(
    transactions: Transactions,
    repository: SubscriptionInterestsRepository,
    nats: NatsConnectionHolder,
    config: WebhooksConfig,
  ) {
    super(transactions, repository, nats, {
      prefix: config.NATS_PREFIX,
      consumer: WEBHOOKS_EVENT_CONSUMER,
      holder: 'subscription',
    });
  }
}
