import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatabaseReadiness, PlatformModule } from '@strata/platform';
import { serviceDataSourceOptions } from '@strata/db';
import { WEBHOOKS_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { SubscriptionIdempotency } from './subscriptions/subscription-idempotency.js';
import { SubscriptionSecrets } from './subscriptions/subscription-secrets.js';
import { SubscriptionsController } from './subscriptions/subscriptions.controller.js';
import { SubscriptionsService } from './subscriptions/subscriptions.service.js';
import { WebhooksConfig } from './webhooks.config.js';

@Module({})
export class WebhooksAppModule {
  static forRoot(config: WebhooksConfig): DynamicModule {
    return {
      module: WebhooksAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: WEBHOOKS_SCHEMA,
            entities: [],
            migrations: MIGRATIONS,
          }),
        ),
        PlatformModule.forRoot({ config }),
      ],
      controllers: [SubscriptionsController],
      providers: [SubscriptionsService, SubscriptionSecrets, SubscriptionIdempotency, DatabaseReadiness],
    };
  }
}
