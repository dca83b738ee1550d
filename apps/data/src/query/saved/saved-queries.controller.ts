import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  CallerGrants,
  CurrentPrincipal,
  RateLimit,
  RequireAllPermissions,
  RequirePermission,
  setDeprecationHeaders,
  UuidPipe,
  type Grants,
  type Principal,
  CallerScope,
} from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { bodyOrThrow, CheckedBodyPipe, type CheckedBody } from '../../schema/checked-body.js';
import {
  CreateSavedQueryRequest,
  ExecuteSavedQueryRequest,
  TestSavedQueryRequest,
} from './dto/saved-query.requests.js';
import { SavedQueriesService } from './saved-queries.service.js';
import { SAVED_QUERIES_SUNSET } from './deprecated-routes.js';
import { markDeprecatedForms } from './deprecated-forms.js';

const BASE = 'data/workspace/:workspace/api/v1';

/**
 * `{data_base}/saved-queries`, also answered under the deprecated alias
 * `/smart-queries` (with Deprecation, Sunset and Link headers).
 */
@ApiTags('saved queries')
@ApiBearerAuth()
@Controller([`${BASE}/saved-queries`, `${BASE}/smart-queries`])
export class SavedQueriesController {
  constructor(private readonly saved: SavedQueriesService) {}

  @Post()
  @HttpCode(201)
  @ApiBody({ type: CreateSavedQueryRequest })
  @RequirePermission('saved-queries', 'create')
  async create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body(new CheckedBodyPipe(CreateSavedQueryRequest)) checked: CheckedBody<CreateSavedQueryRequest>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const saved = await this.saved.create(scope, principal.id, checked.body, checked.problems);
    markDeprecatedForms(res, { placeholders: saved.deprecatedPlaceholders, join: false });
    return saved;
  }

  @Post('slug/:recordSlug/execute/:id')
  @RateLimit('read') // runs a query: a read, whatever its method
  @HttpCode(200)
  @ApiOperation({ summary: 'Legacy execution; answers {result: {rows, meta, fields}}', deprecated: true })
  @ApiBody({ type: ExecuteSavedQueryRequest })
  @RequireAllPermissions('saved-queries:execute', 'records:list')
  async executeLegacy(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordSlug') recordSlug: string,
    @Param('id', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
    @Body(new CheckedBodyPipe(ExecuteSavedQueryRequest)) checked: CheckedBody<ExecuteSavedQueryRequest>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    const base = req.path.slice(0, req.path.indexOf('/slug/')).replace('/smart-queries', '/saved-queries');
    setDeprecationHeaders(res, { sunset: SAVED_QUERIES_SUNSET, successor: `${base}/${id}/execute` });
    const body = bodyOrThrow(checked);
    const { result, deprecated } = await this.saved.execute(scope, grants, id, body.variables ?? {}, recordSlug);
    markDeprecatedForms(res, deprecated);
    const { data, meta } = result;
    const fields = [...new Set(data.flatMap((row) => Object.keys((row as { data?: object }).data ?? {})))];
    return { result: { rows: data, meta, fields } };
  }

  @Get(':resource')
  @RequirePermission('saved-queries', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Param('resource') resource: string) {
    return this.saved.list(scope, resource);
  }

  @Post(':resource/test')
  @RateLimit('read') // runs a query: a read, whatever its method
  @HttpCode(200)
  @ApiOperation({ summary: 'Check and run a definition without saving it' })
  @ApiBody({ type: TestSavedQueryRequest })
  @RequireAllPermissions('saved-queries:execute', 'records:list')
  async test(
    @CallerScope() scope: WorkspaceScope,
    @Param('resource') resource: string,
    @CallerGrants() grants: Grants,
    @Body(new CheckedBodyPipe(TestSavedQueryRequest)) checked: CheckedBody<TestSavedQueryRequest>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { result, deprecated } = await this.saved.test(scope, grants, resource, checked.body, checked.problems);
    markDeprecatedForms(res, deprecated);
    return result;
  }

  @Post(':id/execute')
  @RateLimit('read') // runs a query: a read, whatever its method
  @HttpCode(200)
  @ApiBody({ type: ExecuteSavedQueryRequest })
  @RequireAllPermissions('saved-queries:execute', 'records:list')
  async execute(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
    @Body(new CheckedBodyPipe(ExecuteSavedQueryRequest)) checked: CheckedBody<ExecuteSavedQueryRequest>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { result, deprecated } = await this.saved.execute(scope, grants, id, bodyOrThrow(checked).variables ?? {});
    markDeprecatedForms(res, deprecated);
    return result;
  }

  @Post(':resource/:id/execute')
  @RateLimit('read') // runs a query: a read, whatever its method
  @HttpCode(200)
  @ApiOperation({ summary: 'Earlier canonical execution path' })
  @ApiBody({ type: ExecuteSavedQueryRequest })
  @RequireAllPermissions('saved-queries:execute', 'records:list')
  async executeInResource(
    @CallerScope() scope: WorkspaceScope,
    @Param('resource') resource: string,
    @Param('id', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
    @Body(new CheckedBodyPipe(ExecuteSavedQueryRequest)) checked: CheckedBody<ExecuteSavedQueryRequest>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const variables = bodyOrThrow(checked).variables ?? {};
    const { result, deprecated } = await this.saved.execute(scope, grants, id, variables, resource);
    markDeprecatedForms(res, deprecated);
    return result;
  }
}
