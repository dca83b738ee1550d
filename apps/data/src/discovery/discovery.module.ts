import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module.js';
import { RecordsModule } from '../records/records.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { SchemaDiscoveryController } from './schema-discovery.controller.js';
import { SchemaDiscoveryService } from './schema-discovery.service.js';

/** Schema discovery: scans of a collection's records and the suggestions people accept or reject. */
@Module({
  imports: [CollectionsModule, RecordsModule, SecretsModule],
  controllers: [SchemaDiscoveryController],
  providers: [SchemaDiscoveryService],
})
export class DiscoveryModule {}
