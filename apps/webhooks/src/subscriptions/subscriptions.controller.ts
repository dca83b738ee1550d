import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CurrentPrincipal,
  RequirePermission,
  StrataException,
  UuidPipe,
  type Principal,
  CallerScope,
} from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { CreateSubscriptionRequest, UpdateSubscriptionRequest } from './dto/subscription.requests.js';
import { SubscriptionsService } from './subscriptions.service.js';

/** `{data_base}/webhook-subscriptions`: outbound webhook subscriptions of a workspace. */
@ApiTags('webhook subscriptions')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/webhook-subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create; the response holds the secret, which is never shown again' })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  @RequirePermission('webhook-subscriptions', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateSubscriptionRequest,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    // The subscription acts for its creator: it delivers what the creator may list (docs/webhooks.md).
    if (principal.type === 'publishable_key')
      throw StrataException.forbidden('A publishable key cannot create subscriptions');
    return this.subscriptions.create(scope, { type: principal.type, id: principal.id }, body, idempotencyKey);
  }

  @Get()
  @RequirePermission('webhook-subscriptions', 'list')
  list(@CallerScope() scope: WorkspaceScope) {
    return this.subscriptions.list(scope);
  }

  @Patch(':id')
  @RequirePermission('webhook-subscriptions', 'update')
  update(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateSubscriptionRequest,
  ) {
    return this.subscriptions.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('webhook-subscriptions', 'delete')
  async delete(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string): Promise<void> {
    await this.subscriptions.delete(scope, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new secret, answered once; the previous one keeps signing for 24 hours' })
  @RequirePermission('webhook-subscriptions', 'update')
  rotateSecret(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.subscriptions.rotateSecret(scope, id);
  }
}
