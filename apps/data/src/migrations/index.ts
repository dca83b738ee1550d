import { DataCollections1763700000000 } from './1763700000000-data-collections.js';
import { DataRecords1763700000001 } from './1763700000001-data-records.js';
import { DataIdempotency1763700000002 } from './1763700000002-data-idempotency.js';
import { DataSchemaSuggestions1763700000003 } from './1763700000003-data-schema-suggestions.js';
import { DataSearch1763700000004 } from './1763700000004-data-search.js';
import { DataSavedQueries1763700000005 } from './1763700000005-data-saved-queries.js';
import { DataOutboxNotify1763700000006 } from './1763700000006-data-outbox-notify.js';
import { DataOutboxDeleteOnPublish1763700000007 } from './1763700000007-data-outbox-delete-on-publish.js';
import { DataSecretsMaskedAtRest1763700000008 } from './1763700000008-data-secrets-masked-at-rest.js';
import { DataSealBindings1766100000003 } from './1766100000003-data-seal-bindings.js';
import { DataRetention1766400003000 } from './1766400003000-data-retention.js';
import { DataIdempotencyExactReplay1767200000000 } from './1767200000000-data-idempotency-exact-replay.js';
import { DataChangelogUserName1767200000001 } from './1767200000001-data-changelog-user-name.js';
import { DataCollectionMigrations1767300000000 } from './1767300000000-data-collection-migrations.js';
import { DataRecordsByCollectionId1767300000001 } from './1767300000001-data-records-by-collection-id.js';
import { DataUsageCounters1767500000001 } from './1767500000001-data-usage-counters.js';
import { DataUsageSlotPerTransaction1767500000003 } from './1767500000003-data-usage-slot-per-transaction.js';

import { DataEventInterests1768000000000 } from './1768000000000-data-event-interests.js';
export const DATA_SCHEMA = 'data';
export const MIGRATIONS = [
  DataCollections1763700000000,
  DataRecords1763700000001,
  DataIdempotency1763700000002,
  DataSchemaSuggestions1763700000003,
  DataSearch1763700000004,
  DataSavedQueries1763700000005,
  DataOutboxNotify1763700000006,
  DataOutboxDeleteOnPublish1763700000007,
  DataSecretsMaskedAtRest1763700000008,
  DataSealBindings1766100000003,
  DataRetention1766400003000,
  DataIdempotencyExactReplay1767200000000,
  DataChangelogUserName1767200000001,
  DataCollectionMigrations1767300000000,
  DataRecordsByCollectionId1767300000001,
  DataUsageCounters1767500000001,
  DataUsageSlotPerTransaction1767500000003,
  DataEventInterests1768000000000,
];
