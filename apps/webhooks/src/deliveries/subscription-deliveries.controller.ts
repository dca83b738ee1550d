import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission, UuidPipe, CallerScope } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { DeliveriesService } from './deliveries.service.js';
import { ListDeliveriesQuery, TestDeliveryRequest } from './dto/delivery.requests.js';
import { SubscriptionHealthService } from './subscription-health.service.js';

/** `{data_base}/webhook-subscriptions/{id}/…`: one subscription's deliveries, test sends and health. */
@ApiTags('webhook deliveries')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/webhook-subscriptions/:id')
export class SubscriptionDeliveriesController {
  constructor(
    private readonly deliveries: DeliveriesService,
    private readonly healthService: SubscriptionHealthService,
  ) {}

  @Get('deliveries')
  @ApiOperation({ summary: 'Deliveries of the subscription, newest first, without payloads' })
  @RequirePermission('webhook-subscriptions', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string, @Query() query: ListDeliveriesQuery) {
    return this.deliveries.list(scope, query, id);
  }

  @Get('deliveries/:deliveryId')
  @ApiOperation({ summary: 'A delivery with its payload, headers, receiver response and attempts' })
  @RequirePermission('webhook-subscriptions', 'retrieve')
  get(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Param('deliveryId', UuidPipe) deliveryId: string,
  ) {
    return this.deliveries.get(scope, deliveryId, id);
  }

  @Post('test')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Sends a synthetic delivery (isTest) through the pipeline; answers the row after attempt 1',
  })
  @RequirePermission('webhook-subscriptions', 'update')
  test(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string, @Body() body: TestDeliveryRequest) {
    return this.deliveries.test(scope, id, body);
  }

  @Get('health')
  @ApiOperation({ summary: 'Success rates and totals over 1 h and 24 h, and the last failure' })
  @RequirePermission('webhook-subscriptions', 'retrieve')
  health(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.healthService.health(scope, id);
  }
}
