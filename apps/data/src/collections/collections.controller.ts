import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Collection } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, CurrentPrincipal, RequirePermission, UuidPipe, type Principal } from '@strata/platform';
import { CheckedBodyPipe, type CheckedBody } from '../schema/checked-body.js';
import { CollectionsService, type CollectionPage } from './collections.service.js';
import { CreateCollectionRequest, ListCollectionsQuery, UpdateCollectionRequest } from './dto/collection.requests.js';

const BASE = 'data/workspace/:workspace/api/v1';

/**
 * `{data_base}/structures`, also addressed as `{data_base}/collections`
 * (the same resources under both names).
 */
@ApiTags('collections')
@ApiBearerAuth()
@Controller([`${BASE}/structures`, `${BASE}/collections`])
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a collection (answers 200 with the collection, as the spec states)' })
  @ApiBody({ type: CreateCollectionRequest })
  @RequirePermission('structures', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body(new CheckedBodyPipe(CreateCollectionRequest)) checked: CheckedBody<CreateCollectionRequest>,
  ): Promise<Collection> {
    // The body's problems and the property definitions' are answered together.
    return this.collections.create(scope, principal.id, checked.body, checked.problems);
  }

  @Get()
  @RequirePermission('structures', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: ListCollectionsQuery): Promise<CollectionPage> {
    return this.collections.list(scope, query);
  }

  @Get('slug/:recordSlug')
  @RequirePermission('structures', 'retrieve')
  getBySlug(@CallerScope() scope: WorkspaceScope, @Param('recordSlug') recordSlug: string): Promise<Collection> {
    return this.collections.getBySlug(scope, recordSlug);
  }

  @Get(':id')
  @RequirePermission('structures', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string): Promise<Collection> {
    return this.collections.get(scope, id);
  }

  @Put(':id')
  @ApiBody({ type: UpdateCollectionRequest })
  @RequirePermission('structures', 'update')
  update(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @Body(new CheckedBodyPipe(UpdateCollectionRequest)) checked: CheckedBody<UpdateCollectionRequest>,
  ): Promise<Collection> {
    return this.collections.update(scope, id, principal.id, checked.body, undefined, checked.problems);
  }

  @Delete(':id')
  @RequirePermission('structures', 'delete')
  delete(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<{ success: true; id: string; deletedAt: string }> {
    return this.collections.delete(scope, id, principal.id);
  }

  @Post(':id/restore')
  @HttpCode(200)
  @ApiOperation({ summary: 'Bring back a soft-deleted collection and its records' })
  @RequirePermission('structures', 'update')
  restore(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<Collection> {
    return this.collections.restore(scope, id, principal.id);
  }
}
