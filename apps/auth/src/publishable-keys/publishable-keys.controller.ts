import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission, UuidPipe, type Principal } from '@strata/platform';
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
    @Param('workspace') workspace: string,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreatePublishableKeyRequest,
  ): Promise<PublishableKey & { key: string }> {
    return this.keys.create(workspace, principal.id, body.name, body.permissions);
  }

  @Get()
  @RequirePermission('publishable-keys', 'list')
  async list(@Param('workspace') workspace: string): Promise<{ data: PublishableKey[] }> {
    return { data: await this.keys.list(workspace) };
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @RequirePermission('publishable-keys', 'update')
  revoke(@Param('workspace') workspace: string, @Param('id', UuidPipe) id: string): Promise<PublishableKey> {
    return this.keys.revoke(workspace, id);
  }
}
