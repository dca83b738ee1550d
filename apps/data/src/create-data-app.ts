import { legacyJoinMiddleware } from './query/legacy-join.js';
import { SAVED_QUERY_DEPRECATED_ROUTES } from './query/saved/deprecated-routes.js';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { migrateService } from '@strata/db';
import { createServiceApp, type Clock } from '@strata/platform';
import { DataAppModule } from './app.module.js';
import { DataConfig } from './data.config.js';
import { DATA_SCHEMA, MIGRATIONS } from './migrations/index.js';

/** Runs the data schema's migrations (the start script and the Helm hook call this, not every replica). */
export function migrateData(config: DataConfig): Promise<string[]> {
  return migrateService({ url: config.DATABASE_URL, schema: DATA_SCHEMA, entities: [], migrations: MIGRATIONS });
}

/** Builds the data service. Does not listen. Errors use the records API's shape. */
export function createDataApp(
  config: DataConfig,
  options: { readonly clock?: Clock } = {},
): Promise<NestExpressApplication> {
  return createServiceApp(DataAppModule.forRoot(config, options.clock), {
    name: 'data',
    config,
    description: 'Data: collections (structures), records, versions, references and record events',
    defaultErrorShape: () => 'records',
    deprecatedRoutes: SAVED_QUERY_DEPRECATED_ROUTES,
    // After body parsing, before the guards: a legacy `join` is told of on refusals too.
    beforeInit: (app) => {
      app.use(legacyJoinMiddleware);
    },
  });
}
