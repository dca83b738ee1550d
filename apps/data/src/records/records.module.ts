import { RecordCheckController } from './record-check.controller.js';
import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module.js';
import { EventsModule } from '../events/events.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { BulkRecordsController } from './bulk-records.controller.js';
import { BulkRecordsService } from './bulk-records.service.js';
import { FailureEvents } from './failure-events.js';
import { Idempotency } from './idempotency.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { RecordExpander } from './record-expander.js';
import { RecordHistoryRepository } from './record-history.repository.js';
import { RecordPages } from './record-pages.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordValidator } from './record-validation.js';
import { RecordWriter } from './record-writer.js';
import { RecordsController } from './records.controller.js';
import { RecordsRepository } from './records.repository.js';
import { RecordsService } from './records.service.js';
import { RecordRetention } from './record-retention.js';
import { RecordRetentionRepository } from './record-retention.repository.js';
import { RetentionSweeper } from './retention-sweeper.js';
import { TtlSweeper } from './ttl-sweeper.js';
import { UpsertService } from './upsert.service.js';

/** Records: writes with their versions, changelog and events; reads, pages and expansion; TTL expiry; retention. */
@Module({
  imports: [CollectionsModule, EventsModule, SecretsModule, UsageModule],
  // The bulk routes first: `PATCH /records/bulk` must not be taken for `PATCH /records/{recordId}`.
  controllers: [BulkRecordsController, RecordsController, RecordCheckController],
  providers: [
    RecordsRepository,
    RecordHistoryRepository,
    IdempotencyRepository,
    Idempotency,
    RecordPresenter,
    RecordExpander,
    RecordPages,
    RecordValidator,
    RecordWriter,
    FailureEvents,
    RecordsService,
    BulkRecordsService,
    UpsertService,
    TtlSweeper,
    RetentionSweeper,
    RecordRetentionRepository,
    RecordRetention,
  ],
  exports: [RecordsRepository, RecordPresenter, RecordPages],
})
export class RecordsModule {}
