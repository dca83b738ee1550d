import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, CurrentPrincipal, RequirePermission, UseErrorShape, type Principal } from '@strata/platform';
import { RunDetailQueryRequest, RunListQueryRequest, StartRunRequest } from './dto/run.requests.js';
import { RunsService } from './runs.service.js';

/** `{orch_base}/orchestrations/{orchestrationId}/runs`. */
@ApiTags('orchestration runs')
@ApiBearerAuth()
@UseErrorShape('orchestration')
@Controller('orchestration/ws/:workspaceSlug/api/v1/orchestrations/:orchestrationId')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  @Post('runs')
  @HttpCode(201)
  @ApiOperation({ summary: 'Starts a run (pending) of the current version; body {input?, correlationId?}' })
  @RequirePermission('orchestrations', 'execute')
  start(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    @Param('orchestrationId') id: string,
    @Body() body: StartRunRequest,
  ) {
    return this.runs.start(scope, p.id, id, body);
  }

  @Post('trigger')
  @HttpCode(201)
  @ApiOperation({ summary: 'The other description of starting a run: body {input}, triggerType manual' })
  @RequirePermission('orchestrations', 'execute')
  trigger(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    @Param('orchestrationId') id: string,
    @Body() body: StartRunRequest,
  ) {
    return this.runs.start(scope, p.id, id, body);
  }

  @Post('runs/:runId/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Stops a pending, running or waiting run (it fails, Cancelled by <who>)' })
  @RequirePermission('orchestrations', 'execute')
  cancel(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() p: Principal,
    @Param('orchestrationId') id: string,
    @Param('runId') runId: string,
  ) {
    return this.runs.cancel(scope, p.id, id, runId);
  }

  @Post('runs/:runId/retry')
  @HttpCode(200)
  @ApiOperation({ summary: 'Runs a failed run again from its failed step, keeping the outputs of earlier steps' })
  @RequirePermission('orchestrations', 'execute')
  retry(@CallerScope() scope: WorkspaceScope, @Param('orchestrationId') id: string, @Param('runId') runId: string) {
    return this.runs.retry(scope, id, runId);
  }

  @Get('runs')
  @RequirePermission('orchestrations', 'retrieve')
  list(@CallerScope() scope: WorkspaceScope, @Param('orchestrationId') id: string, @Query() q: RunListQueryRequest) {
    return this.runs.list(scope, id, q);
  }

  @Get('runs/:runId')
  @RequirePermission('orchestrations', 'retrieve')
  get(
    @CallerScope() scope: WorkspaceScope,
    @Param('orchestrationId') id: string,
    @Param('runId') runId: string,
    @Query() q: RunDetailQueryRequest,
  ) {
    return this.runs.get(scope, id, runId, q);
  }

  @Get('runs/:runId/steps')
  @RequirePermission('orchestrations', 'retrieve')
  steps(@CallerScope() scope: WorkspaceScope, @Param('orchestrationId') id: string, @Param('runId') runId: string) {
    return this.runs.steps(scope, id, runId);
  }
}
