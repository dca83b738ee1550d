import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import {
  CallerScope,
  CurrentPrincipal,
  IntegerIdPipe,
  RequirePermission,
  UseErrorShape,
  UuidPipe,
  type Principal,
} from '@strata/platform';
import { FunctionListQueryRequest } from './dto/function-list.query.js';
import { CreateFunctionRequest, TestFunctionRequest, UpdateFunctionRequest } from './dto/function.requests.js';
import { FunctionTestsService } from './function-tests.service.js';
import { FunctionsService } from './functions.service.js';
import { StartsRuns } from '../suspensions/starts-runs.decorator.js';

/** `{data_base}/compute-functions`: functions, their versions and test runs. Permission: write on compute-functions. */
@ApiTags('compute functions')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/compute-functions')
export class FunctionsController {
  constructor(
    private readonly functions: FunctionsService,
    private readonly tests: FunctionTestsService,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('compute-functions', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateFunctionRequest,
  ) {
    return this.functions.create(scope, principal.id, body);
  }

  @Get()
  @ApiOperation({ summary: 'Functions without their code: search, searchField, limit (500, max 1000), page, sort' })
  @RequirePermission('compute-functions', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: FunctionListQueryRequest) {
    return this.functions.list(scope, query);
  }

  @Post('test')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Runs code once through the system default trigger; read the run with GET /function-runs?jobId=',
  })
  @RequirePermission('compute-functions', 'create')
  @StartsRuns()
  test(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: TestFunctionRequest,
  ) {
    return this.tests.test(scope, principal.id, body);
  }

  @Get(':id')
  @RequirePermission('compute-functions', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.functions.get(scope, id);
  }

  @Put(':id')
  @ApiOperation({ summary: 'Any of name, description, code; every update is a new version' })
  @RequirePermission('compute-functions', 'update')
  update(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateFunctionRequest,
  ) {
    return this.functions.update(scope, principal.id, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Deletes the function; its queued runs are cancelled, versions and runs stay' })
  @RequirePermission('compute-functions', 'delete')
  delete(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidPipe) id: string,
  ) {
    return this.functions.delete(scope, principal.id, id);
  }

  @Get(':id/versions')
  @ApiOperation({ summary: 'Every saved version, newest first (who, when, code hash)' })
  @RequirePermission('compute-functions', 'retrieve')
  versions(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.functions.versions(scope, id);
  }

  @Get(':id/versions/:version')
  @ApiOperation({ summary: 'One saved version with its code' })
  @RequirePermission('compute-functions', 'retrieve')
  version(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Param('version', IntegerIdPipe) version: number,
  ) {
    return this.functions.version(scope, id, version);
  }
}
