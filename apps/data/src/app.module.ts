import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatabaseReadiness, PlatformModule } from '@strata/platform';
import { serviceDataSourceOptions } from '@strata/db';
import { CollectionsController } from './collections/collections.controller.js';
import { CollectionsService } from './collections/collections.service.js';
import { DataConfig } from './data.config.js';
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
      controllers: [CollectionsController],
      providers: [CollectionsService, DatabaseReadiness],
    };
  }
}
