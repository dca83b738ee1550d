import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import {
  CallerScope,
  CurrentPrincipal,
  RequirePermission,
  UseErrorShape,
  UuidPipe,
  type Principal,
} from '@strata/platform';
import {
  CreateTriggerRequest,
  RotateCredentialsRequest,
  TriggerListQueryRequest,
  UpdateTriggerRequest,
} from './dto/trigger.requests.js';
import { TriggerExecutions } from './trigger-executions.service.js';
import { TriggersService } from './triggers.service.js';
import { StartsRuns } from '../suspensions/starts-runs.decorator.js';

/** `{data_base}/function-triggers`: what starts functions. Writes need function-triggers' write actions; /execute needs execute. */
@ApiTags('function triggers')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/function-triggers')
export class TriggersController {
  constructor(
    private readonly triggers: TriggersService,
    private readonly executions: TriggerExecutions,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('function-triggers', 'create')
  // Checked by the service: the body's fields, its metadata and its function are reported together.
  @ApiBody({ type: CreateTriggerRequest })
  create(@CallerScope() scope: WorkspaceScope, @CurrentPrincipal() p: Principal, @Body() raw: unknown) {
    return this.triggers.create(scope, p.id, raw);
  }

  @Get()
  @ApiOperation({ summary: 'Triggers: search, searchField, limit (500, max 1000), page, sort' })
  @RequirePermission('function-triggers', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: TriggerListQueryRequest) {
    return this.triggers.list(scope, query);
  }

  @Get(':id')
  @RequirePermission('function-triggers', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.triggers.get(scope, id);
  }

  @Put(':id')
  @ApiOperation({ summary: 'Any of name, description, triggerMetadata (replaced whole); every update is a version' })
  @RequirePermission('function-triggers', 'update')
  update(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateTriggerRequest,
  ) {
    return this.triggers.update(scope, p.id, id, body);
  }

  @Delete(':id')
  @RequirePermission('function-triggers', 'delete')
  delete(@CallerScope() scope: WorkspaceScope, @CurrentPrincipal() p: Principal, @Param('id', UuidPipe) id: string) {
    return this.triggers.delete(scope, p.id, id);
  }

  @Post(':id/rotate-credentials')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Endpoint triggers: new API key and/or signing secret, shown once in issuedCredentials; the old stop working',
  })
  @RequirePermission('function-triggers', 'update')
  rotateCredentials(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Body() body: RotateCredentialsRequest,
  ) {
    return this.triggers.rotateCredentials(scope, id, body.credentials);
  }

  @Post(':id/execute')
  @HttpCode(200)
  @ApiOperation({ summary: 'On-demand triggers: the whole body becomes executionParams; answers the job id' })
  @Header('content-type', 'application/json; charset=utf-8')
  @RequirePermission('function-triggers', 'execute')
  @StartsRuns()
  async execute(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    @Param('id', UuidPipe) id: string,
    @Body() body: unknown,
  ): Promise<string> {
    // A bare JSON string, as the spec answers it.
    return JSON.stringify(await this.executions.executeOnDemand(scope, p.id, id, body));
  }

  @Patch(':id/pause')
  @RequirePermission('function-triggers', 'update')
  pause(@CallerScope() scope: WorkspaceScope, @CurrentPrincipal() p: Principal, @Param('id', UuidPipe) id: string) {
    return this.triggers.setPaused(scope, p.id, id, true);
  }

  @Patch(':id/resume')
  @RequirePermission('function-triggers', 'update')
  resume(@CallerScope() scope: WorkspaceScope, @CurrentPrincipal() p: Principal, @Param('id', UuidPipe) id: string) {
    return this.triggers.setPaused(scope, p.id, id, false);
  }
}
