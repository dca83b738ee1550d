import { Module } from '@nestjs/common';
import { DataUsage } from './data-usage.js';
import { RecordQuota } from './record-quota.js';
import { UsageRepository } from './usage.repository.js';

/** What a workspace's records count against its plan, and the reconciliation of the counters (docs/plans.md). */
@Module({
  providers: [UsageRepository, RecordQuota, DataUsage],
  exports: [RecordQuota, DataUsage],
})
export class UsageModule {}
