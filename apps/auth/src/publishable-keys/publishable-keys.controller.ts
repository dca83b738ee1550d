import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission, UuidPipe, type Principal, CallerScope } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { CreatePublishableKeyRequest } from './dto/create-publishable-key.request.js';
import { PublishableKeysService, type PublishableKey } from './publishable-keys.service.js';

/**
 * `{auth_url}/workspace/{workspace}/api/v1/publishable-keys`. A key is presented
 * in the `X-Publishable-Key` header and grants its read permissions only.
 */
@ApiTags('publishable-keys')
@ApiBearerAuth()
@Controller('workspace/:workspace/api/v1/publishable-keys')
export class PublishableKeysController {
  constructor(private readonly keys: PublishableKeysService) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('publishable-keys', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreatePublishableKeyRequest,
  ): Promise<PublishableKey & { key: string }> {
    return this.keys.create(scope, principal.id, body.name, body.permissions);
  }

  @Get()
  @RequirePermission('publishable-keys', 'list')
  async list(@CallerScope() scope: WorkspaceScope): Promise<{ data: PublishableKey[] }> {
    return { data: await this.keys.list(scope) };
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @RequirePermission('publishable-keys', 'update')
  revoke(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string): Promise<PublishableKey> {
    return this.keys.revoke(scope, id);
  }
}
