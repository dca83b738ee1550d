import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public, RateLimitedInHandler, setDeprecationHeaders, UseErrorShape } from '@strata/platform';
import { ArrivalsService, type Accepted } from './arrivals.service.js';
import { LEGACY_SUNSET, legacySuccessor } from './legacy-entry.js';

/**
 * `{data_base}/http-trigger/{path}` and the legacy `{data_base}/webhook/{path}`:
 * no bearer token; the trigger's signature validation decides (ArrivalsService).
 * Requests in the plain form are served by the same service as direct routes
 * (`captureRoutes`), ahead of this controller; it takes every other form.
 */
@ApiTags('http-trigger')
@Public()
// Arrivals do not spend the workspace's write budget (a provider's burst would starve its API
// writes); each run they start counts against the executions limit when compute queues it.
@RateLimitedInHandler()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1')
export class HttpTriggerController {
  constructor(private readonly arrivals: ArrivalsService) {}

  @Post('http-trigger/:path')
  @HttpCode(202)
  @ApiOperation({ summary: 'An http-trigger arrival: stored (sealed), answered 202, then its run queued' })
  receive(@Req() req: Request, @Param('workspace') workspace: string, @Param('path') path: string): Promise<Accepted> {
    return this.arrivals.receive(req, workspace, path);
  }

  @Post('webhook/:path')
  @HttpCode(202)
  @ApiOperation({ summary: 'Deprecated: use /http-trigger/{path}', deprecated: true })
  receiveLegacy(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Param('workspace') workspace: string,
    @Param('path') path: string,
  ): Promise<Accepted> {
    setDeprecationHeaders(res, { sunset: LEGACY_SUNSET, successor: legacySuccessor(workspace, path) });
    return this.arrivals.receive(req, workspace, path);
  }
}
