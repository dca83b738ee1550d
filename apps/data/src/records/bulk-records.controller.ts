import { Body, Controller, Delete, HttpCode, Patch, Post, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CallerGrants,
  CurrentPrincipal,
  RateLimit,
  RequirePermission,
  type Grants,
  type Principal,
  CallerScope,
} from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { BulkRecordsService } from './bulk-records.service.js';
import { BulkCreateRequest, BulkDeleteRequest, BulkUpdateRequest } from './dto/bulk.requests.js';
import { WakeOutboxRelay } from '../events/wake-outbox-relay.interceptor.js';

/**
 * `{data_base}/records/bulk` and `/records/batch`: registered before the
 * single-record routes so that `bulk` is never read as a record id.
 */
@ApiTags('records')
@ApiBearerAuth()
@RateLimit('bulk')
@Controller('data/workspace/:workspace/api/v1/records')
@UseInterceptors(WakeOutboxRelay)
export class BulkRecordsController {
  constructor(private readonly bulk: BulkRecordsService) {}

  @Post('bulk')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create many records; one records_bulk_created event' })
  @RequirePermission('records', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: BulkCreateRequest,
  ) {
    return this.bulk.create(scope, principal.id, grants, body, false);
  }

  @Post('batch')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create many records; one record_created event per record' })
  @RequirePermission('records', 'create')
  batch(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: BulkCreateRequest,
  ) {
    return this.bulk.create(scope, principal.id, grants, body, true);
  }

  @Patch('bulk')
  @ApiOperation({ summary: 'Update many records; one records_bulk_updated event per collection' })
  @RequirePermission('records', 'update')
  update(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: BulkUpdateRequest,
  ) {
    return this.bulk.update(scope, principal.id, grants, body);
  }

  @Delete('bulk')
  @ApiOperation({ summary: 'Delete many records; one records_bulk_deleted event per collection' })
  @RequirePermission('records', 'delete')
  delete(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: BulkDeleteRequest,
  ) {
    return this.bulk.delete(scope, principal.id, grants, body);
  }
}
