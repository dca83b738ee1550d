import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public, UseErrorShape } from '@strata/platform';
import { WebhookRuns } from './webhook-runs.service.js';

/** `{orch_base}/orchestrations/{id}/webhook` and `{orch_base}/webhooks/{path}`: signature-checked, no bearer. */
@ApiTags('orchestration webhooks')
@Public()
@UseErrorShape('orchestration')
@Controller('orchestration/ws/:workspaceSlug/api/v1')
export class WebhooksController {
  constructor(private readonly webhooks: WebhookRuns) {}

  @Post('orchestrations/:id/webhook')
  @HttpCode(200)
  @ApiOperation({ summary: 'Starts a run of an active http-triggered orchestration; 401 on a bad signature' })
  byId(@Req() req: Request, @Param('workspaceSlug') workspace: string, @Param('id') id: string) {
    return this.webhooks.receive(req, workspace, { id });
  }

  @Post('webhooks/:path')
  @HttpCode(200)
  @ApiOperation({ summary: 'The same, addressed by the trigger’s path' })
  byPath(@Req() req: Request, @Param('workspaceSlug') workspace: string, @Param('path') path: string) {
    return this.webhooks.receive(req, workspace, { path });
  }
}
