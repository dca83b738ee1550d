import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module.js';
import { EventsModule } from '../events/events.module.js';
import { MigrationRunner } from './migration-runner.js';
import { MigrationsController } from './migrations.controller.js';
import { MigrationsService } from './migrations.service.js';

/** Collection migrations: the runner that converts records to a changed definition, and its jobs' routes. */
@Module({
  imports: [CollectionsModule, EventsModule],
  controllers: [MigrationsController],
  providers: [MigrationRunner, MigrationsService],
})
export class CollectionMigrationsModule {}
