import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import {
  Authenticated,
  CallerGrants,
  CallerScope,
  CurrentPrincipal,
  RequirePermission,
  UseErrorShape,
  UuidPipe,
  type Grants,
  type Principal,
} from '@strata/platform';
import { CreateDraftRequest, DraftListQueryRequest, UpdateDraftRequest } from './dto/draft.requests.js';
import { DraftsService } from './drafts.service.js';

/**
 * `{data_base}/drafts`: unpublished function and trigger bodies. Each route
 * checks create on the draft's resource type (the body names it).
 */
@ApiTags('drafts')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/drafts')
export class DraftsController {
  constructor(private readonly drafts: DraftsService) {}

  @Post()
  @HttpCode(201)
  @Authenticated()
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: CreateDraftRequest,
  ) {
    return this.drafts.create(scope, principal.id, grants, body);
  }

  @Get()
  @ApiOperation({ summary: 'Drafts of the workspace, newest first (at most 1000)' })
  @RequirePermission('compute-functions', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: DraftListQueryRequest) {
    return this.drafts.list(scope, query.resourceType);
  }

  @Get(':id')
  @RequirePermission('compute-functions', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.drafts.get(scope, id);
  }

  @Put(':id')
  @Authenticated()
  replace(
    @CallerScope() scope: WorkspaceScope,
    @CallerGrants() grants: Grants,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateDraftRequest,
  ) {
    return this.drafts.replace(scope, grants, id, body.data);
  }

  @Delete(':id')
  @Authenticated()
  delete(@CallerScope() scope: WorkspaceScope, @CallerGrants() grants: Grants, @Param('id', UuidPipe) id: string) {
    return this.drafts.delete(scope, grants, id);
  }
}

/** `POST {data_base}/compute-functions/{draft_id}/publish`: a function draft becomes a function (201). */
@ApiTags('compute functions')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/compute-functions')
export class FunctionDraftsController {
  constructor(private readonly drafts: DraftsService) {}

  @Post(':draftId/publish')
  @HttpCode(201)
  @RequirePermission('compute-functions', 'create')
  publish(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Param('draftId', UuidPipe) draftId: string,
  ) {
    return this.drafts.publishFunction(scope, principal.id, draftId);
  }
}

/** `POST {data_base}/function-triggers/{draft_id}/publish`: a trigger draft becomes a trigger (201). */
@ApiTags('function triggers')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/function-triggers')
export class TriggerDraftsController {
  constructor(private readonly drafts: DraftsService) {}

  @Post(':draftId/publish')
  @HttpCode(201)
  @RequirePermission('function-triggers', 'create')
  publish(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Param('draftId', UuidPipe) draftId: string,
  ) {
    return this.drafts.publishTrigger(scope, principal.id, draftId);
  }
}
