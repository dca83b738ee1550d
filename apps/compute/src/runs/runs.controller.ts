import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import {
  CallerScope,
  CurrentPrincipal,
  RequirePermission,
  UseErrorShape,
  UuidPipe,
  type Principal,
} from '@strata/platform';
import { RerunRequest } from './dto/rerun.requests.js';
import { RunListQueryRequest } from './dto/run-list.query.js';
import { RerunsService } from './reruns.service.js';
import { RunsService } from './runs.service.js';
import { StartsRuns } from '../suspensions/starts-runs.decorator.js';

/** `{data_base}/function-runs`: what every execution did. */
@ApiTags('function runs')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/function-runs')
export class RunsController {
  constructor(
    private readonly runs: RunsService,
    private readonly reruns: RerunsService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Runs, newest first: by jobId, functionId, triggerId, status, since, until' })
  @RequirePermission('function-runs', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: RunListQueryRequest) {
    return this.runs.list(scope, query);
  }

  @Post(':id/rerun')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new run of the same trigger and function with the stored parameters' })
  @RequirePermission('function-triggers', 'execute')
  @StartsRuns()
  rerun(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: RerunRequest,
  ) {
    return this.reruns.rerun(scope, principal.id, id, body);
  }

  @Get(':id/rerun-history')
  @RequirePermission('function-runs', 'retrieve')
  history(@CallerScope() scope: WorkspaceScope, @Param('id') id: string) {
    return this.reruns.history(scope, id);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One run with its logs, API calls, return value or error' })
  @RequirePermission('function-runs', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.runs.get(scope, id);
  }
}
