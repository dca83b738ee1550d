import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Transactions } from '@strata/db';
import { DatabaseReadiness, PlatformModule, TransactionsProvider, type Clock } from '@strata/platform';
import { serviceDataSourceOptions } from '@strata/db';
import { CollectionMigrationsModule } from './collection-migrations/collection-migrations.module.js';
import { CollectionsModule } from './collections/collections.module.js';
import { DataConfig } from './data.config.js';
import { DiscoveryModule } from './discovery/discovery.module.js';
import { EventInterestsModule } from './event-interests/event-interests.module.js';
import { EventsModule } from './events/events.module.js';
import { DATA_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { QueryModule } from './query/query.module.js';
import { RecordsModule } from './records/records.module.js';

/** Transactions for every feature module; services never hold the DataSource. */
@Global()
@Module({ providers: [TransactionsProvider, DatabaseReadiness], exports: [Transactions] })
class DataAccessModule {}

@Module({})
export class DataAppModule {
  /** `clock`: the service's clock (record expiry, rate-limit windows); the system clock unless given. */
  static forRoot(config: DataConfig, clock?: Clock): DynamicModule {
    return {
      module: DataAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: DATA_SCHEMA,
            entities: [],
            migrations: MIGRATIONS,
          }),
        ),
        PlatformModule.forRoot({ config, clock }),
        DataAccessModule,
        // First: Nest registers a module's routes in the order modules are scanned (a module before
        // its imports), and Express tries them in that order on every request; the record routes,
        // the hot ones, then match without walking the others first. No route of a later module
        // overlaps one of these (docs/performance.md, "Fixes after the profile").
        RecordsModule,
        CollectionsModule,
        CollectionMigrationsModule,
        DiscoveryModule,
        QueryModule,
        EventsModule,
        EventInterestsModule,
      ],
    };
  }
}
