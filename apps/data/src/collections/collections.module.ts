import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { BulkCollectionsController } from './bulk/bulk-collections.controller.js';
import { BulkCollectionsService } from './bulk/bulk-collections.service.js';
import { CollectionsController } from './collections.controller.js';
import { CollectionsRepository } from './collections.repository.js';
import { CollectionsService } from './collections.service.js';
import { PropertyIndexer } from './indexes/property-indexer.js';
import { MigrationBatch } from './migrations/migration-batch.js';
import { MigrationConversions } from './migrations/migration-conversions.js';
import { MigrationSignals } from './migrations/migration-signals.js';
import { MigrationStarter } from './migrations/migration-starter.js';
import { MigrationsRepository } from './migrations/migrations.repository.js';
import { PropertyRemovalService } from './properties/property-removal.service.js';
import { RecordValuesRepository } from './properties/record-values.repository.js';
import { SecretFieldsRepository } from './secret-fields.repository.js';
import { SuggestionsRepository } from './suggestions/suggestions.repository.js';
import { DefinitionValidationController } from './validate/definition-validation.controller.js';
import { DefinitionValidationService } from './validate/definition-validation.service.js';
import { RecordsScanRepository } from './validate/records-scan.repository.js';
import { WriteCollections } from './write-collections.js';

/** Collections (structures): their definitions, per-collection indexes, migrations and proposed properties. */
@Module({
  imports: [EventsModule, SecretsModule],
  // The bulk routes first: `DELETE /structures/{id}` would take `bulk` for an id.
  controllers: [BulkCollectionsController, DefinitionValidationController, CollectionsController],
  providers: [
    BulkCollectionsService,
    CollectionsRepository,
    CollectionsService,
    DefinitionValidationService,
    MigrationBatch,
    MigrationConversions,
    MigrationSignals,
    MigrationStarter,
    MigrationsRepository,
    PropertyIndexer,
    PropertyRemovalService,
    RecordValuesRepository,
    RecordsScanRepository,
    SecretFieldsRepository,
    SuggestionsRepository,
    WriteCollections,
  ],
  exports: [
    CollectionsRepository,
    CollectionsService,
    DefinitionValidationService,
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
