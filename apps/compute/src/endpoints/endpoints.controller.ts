import { All, Controller, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public, RateLimitedInHandler, UseErrorShape } from '@strata/platform';
import { EndpointCalls } from './endpoint-calls.service.js';

/** The paths of endpoint calls, whose handler reads the raw body itself (hmac signatures cover the bytes as sent). */
export const ENDPOINT_CALL_PATHS = /^\/data\/workspace\/[^/]+\/api\/v1\/endpoints\//;

/**
 * `{data_base}/endpoints/{path}`: endpoint triggers, called synchronously. The
 * platform guard lets every call through; the endpoint's own auth modes decide
 * (EndpointAuthenticator), and only a call that reaches a run counts against the
 * executions limit.
 */
@ApiTags('endpoints')
@Public()
@RateLimitedInHandler()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/endpoints')
export class EndpointsController {
  constructor(private readonly calls: EndpointCalls) {}

  @All(':path')
  @ApiOperation({
    summary: "Calls an endpoint trigger with one of its allowedMethods; answers the function's response",
  })
  call(
    @Req() req: Request,
    @Res() res: Response,
    @Param('workspace') workspace: string,
    @Param('path') path: string,
  ): Promise<void> {
    return this.calls.call(req, res, workspace, path);
  }
}
