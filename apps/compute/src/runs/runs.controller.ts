import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, RequirePermission, UseErrorShape, UuidPipe } from '@strata/platform';
import { RunListQueryRequest } from './dto/run-list.query.js';
import { RunsService } from './runs.service.js';

/** `{data_base}/function-runs`: what every execution did. */
@ApiTags('function runs')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/function-runs')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  @Get()
  @ApiOperation({ summary: 'Runs, newest first: by jobId, functionId, triggerId, status, since, until' })
  @RequirePermission('function-runs', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: RunListQueryRequest) {
    return this.runs.list(scope, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One run with its logs, API calls, return value or error' })
  @RequirePermission('function-runs', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.runs.get(scope, id);
  }
}
