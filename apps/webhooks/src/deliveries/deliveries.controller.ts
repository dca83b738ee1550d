import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission, RequireScope, UuidPipe, CallerScope } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { DeliveriesService } from './deliveries.service.js';
import { ListDeliveriesQuery } from './dto/delivery.requests.js';

/** `{data_base}/webhook-subscriptions/deliveries/…`: the workspace's deliveries, replay and cancel. */
@ApiTags('webhook deliveries')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/webhook-subscriptions/deliveries')
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('recent')
  @ApiOperation({ summary: 'Recent deliveries of every subscription, newest first' })
  @RequirePermission('webhook-subscriptions', 'list')
  recent(@CallerScope() scope: WorkspaceScope, @Query() query: ListDeliveriesQuery) {
    return this.deliveries.list(scope, query);
  }

  @Get('failed')
  @ApiOperation({ summary: 'Failed deliveries of every subscription, newest first' })
  @RequirePermission('webhook-subscriptions', 'list')
  failed(@CallerScope() scope: WorkspaceScope, @Query() query: ListDeliveriesQuery) {
    return this.deliveries.list(scope, { ...query, status: 'failed' });
  }

  @Post(':deliveryId/retry')
  @HttpCode(201)
  @ApiOperation({ summary: 'Replays a finished delivery as a new one (replayedFrom); scope webhooks:replay' })
  @RequirePermission('webhook-subscriptions', 'update')
  @RequireScope('webhooks:replay')
  retry(@CallerScope() scope: WorkspaceScope, @Param('deliveryId', UuidPipe) deliveryId: string) {
    return this.deliveries.replay(scope, deliveryId);
  }

  @Post(':deliveryId/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Stops a retrying delivery: failed, "Cancelled by user"; scope webhooks:cancel' })
  @RequirePermission('webhook-subscriptions', 'update')
  @RequireScope('webhooks:cancel')
  cancel(@CallerScope() scope: WorkspaceScope, @Param('deliveryId', UuidPipe) deliveryId: string) {
    return this.deliveries.cancel(scope, deliveryId);
  }
}
