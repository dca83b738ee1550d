import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { BulkCollectionsController } from './bulk-collections.controller.js';
import { BulkCollectionsService } from './bulk-collections.service.js';
import { CollectionsController } from './collections.controller.js';
import { CollectionsRepository } from './collections.repository.js';
import { CollectionsService } from './collections.service.js';
import { PropertyIndexer } from './indexes/property-indexer.js';
import { MigrationBatch } from './migrations/migration-batch.js';
import { MigrationConversions } from './migrations/migration-conversions.js';
import { MigrationSignals } from './migrations/migration-signals.js';
import { MigrationStarter } from './migrations/migration-starter.js';
import { MigrationsRepository } from './migrations/migrations.repository.js';
import { SecretFieldsRepository } from './secret-fields.repository.js';
import { SuggestionsRepository } from './suggestions/suggestions.repository.js';
import { WriteCollections } from './write-collections.js';

/** Collections (structures): their definitions, per-collection indexes and proposed properties. */
@Module({
  imports: [EventsModule, SecretsModule],
  // The bulk routes first: `DELETE /structures/{id}` would take `bulk` for an id.
  controllers: [BulkCollectionsController, CollectionsController],
  providers: [
    BulkCollectionsService,
    CollectionsRepository,
    CollectionsService,
    MigrationBatch,
    MigrationConversions,
    MigrationSignals,
    MigrationStarter,
    MigrationsRepository,
    PropertyIndexer,
    SecretFieldsRepository,
    SuggestionsRepository,
    WriteCollections,
  ],
  exports: [
    CollectionsRepository,
    CollectionsService,
    MigrationBatch,
    MigrationConversions,
    MigrationSignals,
    MigrationsRepository,
    PropertyIndexer,
    SecretFieldsRepository,
    SuggestionsRepository,
    WriteCollections,
  ],
})
export class CollectionsModule {}
