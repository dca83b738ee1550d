import { serviceDataSourceOptions } from '@strata/db';
import type { DataSourceOptions } from 'typeorm';
import { AllowedDomainEntity } from './allowed-domains/allowed-domain.entity.js';
import type { ComputeConfig } from './compute.config.js';
import { DraftEntity } from './drafts/draft.entity.js';
import { EndpointCredentialsEntity } from './endpoints/endpoint-credentials.entity.js';
import { FunctionVersionEntity } from './functions/function-version.entity.js';
import { FunctionEntity } from './functions/function.entity.js';
import { COMPUTE_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { RunDocumentEntity } from './run-documents/run-document.entity.js';
import { RunEntity } from './runs/run.entity.js';
import { TriggerEntity } from './triggers/trigger.entity.js';

export const COMPUTE_ENTITIES = [
  FunctionEntity,
  FunctionVersionEntity,
  DraftEntity,
  RunEntity,
  AllowedDomainEntity,
  RunDocumentEntity,
  TriggerEntity,
  EndpointCredentialsEntity,
];

/** The compute schema's data source, for the API, the workers and the migrations. */
export function computeDataSourceOptions(config: ComputeConfig, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url: config.DATABASE_URL,
    schema: COMPUTE_SCHEMA,
    entities: COMPUTE_ENTITIES,
    migrations: MIGRATIONS,
    ...(poolSize ? { poolSize } : {}),
  });
}
