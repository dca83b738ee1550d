import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatabaseReadiness, PlatformModule } from '@strata/platform';
import { serviceDataSourceOptions } from '@strata/db';
import { CollectionsController } from './collections/collections.controller.js';
import { PropertyIndexer } from './collections/indexes/property-indexer.js';
import { CollectionsService } from './collections/collections.service.js';
import { DataConfig } from './data.config.js';
import { OutboxRelay } from './events/outbox-relay.js';
import { Outbox } from './records/outbox.js';
import { RecordSecrets } from './records/record-secrets.js';
import { SecretFieldChanges } from './records/secret-field-changes.js';
import { RecordWriter } from './records/record-writer.js';
import { WriteCollections } from './records/write-collections.js';
import { RecordPresenter } from './records/record-presenter.js';
import { RecordExpander } from './records/record-expander.js';
import { TtlSweeper } from './records/ttl-sweeper.js';
import { QueryController } from './query/query.controller.js';
import { QueryService } from './query/query.service.js';
import { LanguageController } from './query/language/language.controller.js';
import { LanguageService } from './query/language/language.service.js';
import { SavedQueriesController } from './query/saved/saved-queries.controller.js';
import { SavedQueriesService } from './query/saved/saved-queries.service.js';
import { FailureEvents } from './records/failure-events.js';
import { SuggestionsStore } from './discovery/suggestions.store.js';
import { SchemaDiscoveryService } from './discovery/schema-discovery.service.js';
import { SchemaDiscoveryController } from './discovery/schema-discovery.controller.js';
import { Idempotency } from './records/idempotency.js';
import { UpsertService } from './records/upsert.service.js';
import { BulkRecordsController } from './records/bulk-records.controller.js';
import { BulkRecordsService } from './records/bulk-records.service.js';
import { RecordsController } from './records/records.controller.js';
import { RecordsService } from './records/records.service.js';
import { DATA_SCHEMA, MIGRATIONS } from './migrations/index.js';

@Module({})
export class DataAppModule {
  static forRoot(config: DataConfig): DynamicModule {
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
        PlatformModule.forRoot({ config }),
      ],
      controllers: [
        CollectionsController,
        SchemaDiscoveryController,
        QueryController,
        LanguageController,
        SavedQueriesController,
        BulkRecordsController,
        RecordsController,
      ],
      providers: [
        CollectionsService,
        PropertyIndexer,
        RecordsService,
        BulkRecordsService,
        RecordPresenter,
        RecordExpander,
        TtlSweeper,
        QueryService,
        LanguageService,
        SavedQueriesService,
        FailureEvents,
        SuggestionsStore,
        SchemaDiscoveryService,
        UpsertService,
        Idempotency,
        RecordWriter,
        WriteCollections,
        RecordSecrets,
        SecretFieldChanges,
        Outbox,
        OutboxRelay,
        DatabaseReadiness,
      ],
    };
  }
}
