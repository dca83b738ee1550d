import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerGrants, CallerScope, RateLimit, RequirePermission, UseErrorShape, type Grants } from '@strata/platform';
import { InboundEventListQuery } from './dto/inbound-event-list.query.js';
import { BulkReplayRequest } from './dto/bulk-replay.request.js';
import { ReplayQuery } from './dto/replay.query.js';
import { InboundEventsService } from './inbound-events.service.js';

/** `{data_base}/inbound-events`: captured http-trigger arrivals. */
@ApiTags('inbound events')
@ApiBearerAuth()
@UseErrorShape('general')
@Controller('data/workspace/:workspace/api/v1/inbound-events')
export class InboundEventsController {
  constructor(private readonly events: InboundEventsService) {}

  @Get()
  @ApiOperation({ summary: 'Arrivals, newest first; never their bodies or headers' })
  @RequirePermission('function-triggers', 'retrieve')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: InboundEventListQuery) {
    return this.events.list(scope, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One arrival; its body and headers (credentials masked) with secrets:reveal' })
  @RequirePermission('function-triggers', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @CallerGrants() grants: Grants, @Param('id') id: string) {
    return this.events.get(scope, id, grants.can('secrets', 'reveal'));
  }

  @Post('replay')
  @HttpCode(202)
  @ApiOperation({ summary: 'Replays up to 100 arrivals matching a trigger or time window, oldest first' })
  @RequirePermission('function-triggers', 'execute')
  @RateLimit('execute')
  replayMany(@CallerScope() scope: WorkspaceScope, @Body() body: BulkReplayRequest) {
    return this.events.replayMany(scope, body);
  }

  @Post(':id/replay')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'A new arrival with the same body and headers, run by the trigger’s current function; ?dryRun=true says what would run',
  })
  @RequirePermission('function-triggers', 'execute')
  @RateLimit('execute')
  async replay(
    @CallerScope() scope: WorkspaceScope,
    @Param('id') id: string,
    @Query() query: ReplayQuery,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (query.dryRun === true) {
      res.status(200);
      return this.events.dryRun(scope, id);
    }
    return this.events.replay(scope, id);
  }
}
