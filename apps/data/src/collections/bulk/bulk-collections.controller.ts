import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Collection } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import {
  CallerScope,
  CurrentPrincipal,
  RateLimit,
  RequirePermission,
  StrataException,
  UuidPipe,
  type Principal,
} from '@strata/platform';
import { PropertyRemovalService, type PropertyRemoval } from '../properties/property-removal.service.js';
import { BulkCollectionsService, type BulkDeleteResult } from './bulk-collections.service.js';
import {
  BulkCreateCollectionsRequest,
  BulkDeleteCollectionsRequest,
  RemovePropertiesRequest,
} from './bulk.requests.js';

const BASE = 'data/workspace/:workspace/api/v1';

/**
 * The bulk operations of `{data_base}/structures` (also `/collections`). Registered before
 * the collections controller, whose `DELETE /structures/{id}` would otherwise take `bulk`
 * for an id.
 */
@ApiTags('collections')
@ApiBearerAuth()
@Controller([`${BASE}/structures`, `${BASE}/collections`])
export class BulkCollectionsController {
  constructor(
    private readonly bulk: BulkCollectionsService,
    private readonly properties: PropertyRemovalService,
  ) {}

  @Post('bulk')
  @HttpCode(200)
  @RateLimit('bulk')
  @ApiOperation({
    summary: 'Create collections together (all or none; references among them in any order)',
    description:
      'Answers `{results: [collection]}` in the request order. Every problem of every definition comes in one 400 ' +
      '(`collections[i].properties[j].type`, under the key the definitions came in); a taken slug is a 409.',
  })
  @ApiBody({ type: BulkCreateCollectionsRequest })
  @RequirePermission('structures', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: BulkCreateCollectionsRequest,
  ): Promise<{ results: Collection[] }> {
    if (body.structures !== undefined && body.collections !== undefined) {
      throw StrataException.validation([
        { field: 'collections', message: 'send the definitions under structures or under collections, not both' },
      ]);
    }
    if (body.collections !== undefined)
      return this.bulk.createMany(scope, principal.id, 'collections', body.collections);
    return this.bulk.createMany(scope, principal.id, 'structures', body.structures ?? []);
  }

  @Delete('bulk')
  @RateLimit('bulk')
  @ApiOperation({
    summary: 'Soft-delete collections by id or recordSlug, answering per item',
    description:
      '`{success, deleted: [{id, recordSlug, deletedAt}], failed, errors: [{field, error: {code, message}}]}`. ' +
      'A collection another collection references stays (409 in `errors`) unless that one is deleted in the same call.',
  })
  @ApiBody({ type: BulkDeleteCollectionsRequest })
  @RequirePermission('structures', 'delete')
  delete(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: BulkDeleteCollectionsRequest,
  ): Promise<BulkDeleteResult> {
    return this.bulk.deleteMany(scope, principal.id, body.ids ?? [], body.slugs ?? []);
  }

  @Delete(':id/properties')
  @ApiOperation({
    summary: 'Remove top-level properties by name',
    description:
      '`{success, collection, valuesRemoved}`. 409 while records hold values for them (unless `force: true`, which ' +
      'removes the values in batches), and while a reference, the defaultSearchField or immutability holds one; ' +
      'an unknown name is a 400.',
  })
  @ApiBody({ type: RemovePropertiesRequest })
  @RequirePermission('structures', 'update')
  removeProperties(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @Body() body: RemovePropertiesRequest,
  ): Promise<PropertyRemoval> {
    return this.properties.remove(scope, id, principal.id, body.names, body.force === true);
  }
}
