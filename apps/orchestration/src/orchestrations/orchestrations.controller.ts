import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, CurrentPrincipal, RequirePermission, UseErrorShape, type Principal } from '@strata/platform';
import {
  CreateOrchestrationRequest,
  OrchestrationListQueryRequest,
  UpdateOrchestrationRequest,
} from './dto/orchestration.requests.js';
import { TestDecisionRequest } from './dto/test-decision.request.js';
import { RunsService } from '../runs/runs.service.js';
import { OrchestrationsService } from './orchestrations.service.js';

/**
 * `{orch_base}/orchestrations`. Permissions on `orchestrations`: the spec names
 * none for this area, so each operation needs its own action, as for every resource.
 */
@ApiTags('orchestrations')
@ApiBearerAuth()
@UseErrorShape('orchestration')
@Controller('orchestration/ws/:workspaceSlug/api/v1/orchestrations')
export class OrchestrationsController {
  constructor(
    private readonly orchestrations: OrchestrationsService,
    private readonly runs: RunsService,
  ) {}

  @Get()
  @RequirePermission('orchestrations', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: OrchestrationListQueryRequest) {
    return this.orchestrations.list(scope, query);
  }

  @Post()
  @ApiBody({ type: CreateOrchestrationRequest })
  @HttpCode(201)
  @RequirePermission('orchestrations', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    // Checked by the service, with the trigger and the steps, so that every problem is reported at once.
    @Body() body: unknown,
  ) {
    return this.orchestrations.create(scope, p.id, body);
  }

  @Get(':id')
  @RequirePermission('orchestrations', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id') id: string) {
    return this.orchestrations.get(scope, id);
  }

  @Put(':id')
  @ApiBody({ type: UpdateOrchestrationRequest })
  @RequirePermission('orchestrations', 'update')
  update(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
  ) {
    return this.orchestrations.update(scope, p.id, id, body);
  }

  @Post(':id/steps/:stepId/test-decision')
  @HttpCode(200)
  @RequirePermission('orchestrations', 'retrieve')
  testDecision(
    @CallerScope() scope: WorkspaceScope,
    @Param('id') id: string,
    @Param('stepId') stepId: string,
    @Body() body: TestDecisionRequest,
  ) {
    return this.orchestrations.testDecision(scope, id, stepId, body.testData);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('orchestrations', 'delete')
  async delete(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
  ): Promise<void> {
    await this.orchestrations.delete(scope, id);
    // Its runs that have not ended stop: a deleted orchestration runs nothing any more.
    await this.runs.cancelAllOf(scope, p.id, id);
  }
}
