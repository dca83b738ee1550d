import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Collection } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import {
  CallerScope,
  CurrentPrincipal,
  RateLimit,
  RequirePermission,
  UuidPipe,
  type Principal,
} from '@strata/platform';
import { BulkCollectionsService } from './bulk-collections.service.js';
import {
  BulkCreateCollectionsRequest,
  BulkDeleteCollectionsRequest,
  RemovePropertiesRequest,
} from './dto/collection.requests.js';

const BASE = 'data/workspace/:workspace/api/v1';

/**
 * The bulk operations of `{data_base}/structures` (also `/collections`). Registered before
 * {@link CollectionsController}, whose `DELETE /structures/{id}` would otherwise take `bulk`
 * for an id.
 */
@ApiTags('collections')
@ApiBearerAuth()
@Controller([`${BASE}/structures`, `${BASE}/collections`])
export class BulkCollectionsController {
  constructor(private readonly bulk: BulkCollectionsService) {}

  @Post('bulk')
  @HttpCode(200)
  @RateLimit('bulk')
  @ApiOperation({ summary: 'Create collections together (in order; all or none)' })
  @ApiBody({ type: BulkCreateCollectionsRequest })
  @RequirePermission('structures', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: BulkCreateCollectionsRequest,
  ): Promise<{ results: Collection[] }> {
    return this.bulk.createMany(scope, principal.id, body.structures);
  }

  @Delete('bulk')
  @RateLimit('bulk')
  @ApiOperation({ summary: 'Soft-delete collections together (all or none)' })
  @ApiBody({ type: BulkDeleteCollectionsRequest })
  @RequirePermission('structures', 'delete')
  delete(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: BulkDeleteCollectionsRequest,
  ): Promise<{ success: true; deleted: { id: string; deletedAt: string }[] }> {
    return this.bulk.deleteMany(scope, principal.id, body.ids);
  }

  @Delete(':id/properties')
  @ApiOperation({ summary: 'Remove top-level properties by name' })
  @ApiBody({ type: RemovePropertiesRequest })
  @RequirePermission('structures', 'update')
  removeProperties(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @Body() body: RemovePropertiesRequest,
  ): Promise<Collection> {
    return this.bulk.removeProperties(scope, id, principal.id, body.names);
  }
}
