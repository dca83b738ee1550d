import { SubscriptionInterests } from './subscriptions/subscription-interests.js';
import { SubscriptionInterestsRepository } from './subscriptions/subscription-interests.repository.js';
import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatabaseReadiness, PlatformModule, TransactionsProvider, type Clock } from '@strata/platform';
import { serviceDataSourceOptions } from '@strata/db';
import { ReceiverCircuits } from './breaker/receiver-circuits.repository.js';
import { DeliveriesController } from './deliveries/deliveries.controller.js';
import { DeliveriesRepository } from './deliveries/deliveries.repository.js';
import { DeliveriesService } from './deliveries/deliveries.service.js';
import { DeliveryDispatcher } from './deliveries/delivery-dispatcher.js';
import { DeliveryMetrics } from './deliveries/delivery-metrics.js';
import { DeliveryStore } from './deliveries/delivery-store.repository.js';
import { SubscriptionDeliveriesController } from './deliveries/subscription-deliveries.controller.js';
import { SubscriptionHealthService } from './deliveries/subscription-health.service.js';
import { RecordEventConsumer } from './events/record-event-consumer.js';
import { ServiceTokens } from './owners/service-tokens.js';
import { SubscriptionOwners } from './owners/subscription-owners.js';
import { WEBHOOKS_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { WebhooksRetention } from './retention/webhooks-retention.js';
import { WebhooksRetentionRepository } from './retention/webhooks-retention.repository.js';
import { SubscriptionIdempotency } from './subscriptions/subscription-idempotency.js';
import { SubscriptionIdempotencyRepository } from './subscriptions/subscription-idempotency.repository.js';
import { SubscriptionSecrets } from './subscriptions/subscription-secrets.js';
import { SubscriptionsController } from './subscriptions/subscriptions.controller.js';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository.js';
import { SubscriptionsService } from './subscriptions/subscriptions.service.js';
import { WebhooksConfig } from './webhooks.config.js';
import { WebhooksUsageRepository } from './usage/usage.repository.js';
import { WebhooksUsage } from './usage/webhooks-usage.js';

/** What a webhooks service is built with besides its settings. */
export interface WebhooksAppOptions {
  /** The clock of the retry schedule, leases, the circuit breaker and the rotation grace (the system clock unless given). */
  readonly clock?: Clock;
}

@Module({})
export class WebhooksAppModule {
  static forRoot(config: WebhooksConfig, options: WebhooksAppOptions = {}): DynamicModule {
    return {
      module: WebhooksAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: WEBHOOKS_SCHEMA,
            entities: [],
            migrations: MIGRATIONS,
            // Attempts in flight and the consumer's inserts each hold a connection briefly.
            poolSize: 20,
          }),
        ),
        PlatformModule.forRoot({ config, clock: options.clock }),
      ],
      // DeliveriesController before the :id routes, so `deliveries/…` is never read as an id.
      controllers: [DeliveriesController, SubscriptionsController, SubscriptionDeliveriesController],
      providers: [
        TransactionsProvider,
        SubscriptionsRepository,
        WebhooksUsageRepository,
        WebhooksUsage,
        SubscriptionIdempotencyRepository,
        DeliveriesRepository,
        SubscriptionsService,
        SubscriptionInterests,
        SubscriptionInterestsRepository,
        SubscriptionSecrets,
        SubscriptionIdempotency,
        DeliveriesService,
        SubscriptionHealthService,
        DeliveryStore,
        DeliveryDispatcher,
        DeliveryMetrics,
        ReceiverCircuits,
        RecordEventConsumer,
        ServiceTokens,
        SubscriptionOwners,
        WebhooksRetentionRepository,
        WebhooksRetention,
        DatabaseReadiness,
      ],
    };
  }
}
