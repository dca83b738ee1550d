import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import { DatabaseReadiness, PlatformModule, TransactionsProvider, type Clock } from '@strata/platform';
import { BucketsController } from './buckets/buckets.controller.js';
import { BucketsRepository } from './buckets/buckets.repository.js';
import { BucketsService } from './buckets/buckets.service.js';
import { OpenDownloadsController } from './downloads/open-downloads.controller.js';
import { DriversModule } from './drivers/drivers.module.js';
import { FilesController } from './files/files.controller.js';
import { FilesRepository } from './files/files.repository.js';
import { FilesService } from './files/files.service.js';
import { IdempotencyRepository } from './idempotency/idempotency.repository.js';
import { MIGRATIONS, STORAGE_SCHEMA } from './migrations/index.js';
import { PurgeSweeper } from './purge/purge-sweeper.js';
import { PurgesRepository } from './purge/purges.repository.js';
import { StorageConfig } from './storage.config.js';
import { UploadsService } from './upload/uploads.service.js';

/** What a storage service is built with besides its settings. */
export interface StorageAppOptions {
  /** The clock of link expiries, purge due times and rate-limit windows (the system clock unless given). */
  readonly clock?: Clock;
}

export const STORAGE_ENTITIES = [];

@Module({})
export class StorageAppModule {
  static forRoot(config: StorageConfig, options: StorageAppOptions = {}): DynamicModule {
    return {
      module: StorageAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: STORAGE_SCHEMA,
            entities: STORAGE_ENTITIES,
            migrations: MIGRATIONS,
          }),
        ),
        PlatformModule.forRoot({ config, clock: options.clock }),
        DriversModule,
      ],
      controllers: [FilesController, OpenDownloadsController, BucketsController],
      providers: [
        TransactionsProvider,
        BucketsRepository,
        BucketsService,
        FilesRepository,
        FilesService,
        PurgesRepository,
        PurgeSweeper,
        IdempotencyRepository,
        UploadsService,
        DatabaseReadiness,
      ],
    };
  }
}
