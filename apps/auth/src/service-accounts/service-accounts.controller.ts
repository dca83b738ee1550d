import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CurrentPrincipal,
  IntegerIdPipe,
  RequirePermission,
  UserOnly,
  type Principal,
  CallerScope,
} from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import {
  CreateServiceAccountRequest,
  DescribeServiceAccountRequest,
  ListServiceAccountsQuery,
  RenameServiceAccountRequest,
} from './dto/service-account.requests.js';
import {
  ServiceAccountsService,
  type ServiceAccount,
  type ServiceAccountWithSecret,
} from './service-accounts.service.js';

type Rotated = Pick<ServiceAccountWithSecret, 'id' | 'clientId' | 'clientSecret' | 'name' | 'workspace' | 'updatedAt'>;

/**
 * `{auth_url}/workspace/{workspace}/api/v1/service-accounts`. Managed with a
 * user token only: a service-account token gets 403.
 */
@ApiTags('service-accounts')
@ApiBearerAuth()
@UserOnly()
@Controller('workspace/:workspace/api/v1/service-accounts')
export class ServiceAccountsController {
  constructor(private readonly accounts: ServiceAccountsService) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('service-accounts', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateServiceAccountRequest,
  ): Promise<ServiceAccountWithSecret> {
    return this.accounts.create(scope, principal.id, body);
  }

  @Get()
  @RequirePermission('service-accounts', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: ListServiceAccountsQuery) {
    return this.accounts.list(scope, query.page ?? 1, query.limit ?? 50);
  }

  @Get(':id')
  @RequirePermission('service-accounts', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('id', IntegerIdPipe) id: number): Promise<ServiceAccount> {
    return this.accounts.get(scope, id);
  }

  @Put(':id/name')
  @RequirePermission('service-accounts', 'update')
  rename(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', IntegerIdPipe) id: number,
    @Body() body: RenameServiceAccountRequest,
  ): Promise<ServiceAccount> {
    return this.accounts.rename(scope, id, body.name);
  }

  @Put(':id/description')
  @RequirePermission('service-accounts', 'update')
  describe(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', IntegerIdPipe) id: number,
    @Body() body: DescribeServiceAccountRequest,
  ): Promise<ServiceAccount> {
    return this.accounts.describe(scope, id, body.description);
  }

  @Post(':id/rotate')
  @HttpCode(200)
  @RequirePermission('service-accounts', 'update')
  rotate(@CallerScope() scope: WorkspaceScope, @Param('id', IntegerIdPipe) id: number): Promise<Rotated> {
    return this.rotated(scope, id);
  }

  @Put(':id/rotate')
  @ApiOperation({
    deprecated: true,
    summary: 'Older form of POST …/rotate (reached as PUT {base_url}/iam/workspace/…)',
  })
  @RequirePermission('service-accounts', 'update')
  rotateLegacy(@CallerScope() scope: WorkspaceScope, @Param('id', IntegerIdPipe) id: number): Promise<Rotated> {
    return this.rotated(scope, id);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @RequirePermission('service-accounts', 'update')
  revoke(@CallerScope() scope: WorkspaceScope, @Param('id', IntegerIdPipe) id: number): Promise<ServiceAccount> {
    return this.accounts.revoke(scope, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('service-accounts', 'delete')
  async delete(@CallerScope() scope: WorkspaceScope, @Param('id', IntegerIdPipe) id: number): Promise<void> {
    await this.accounts.delete(scope, id);
  }

  private async rotated(scope: WorkspaceScope, id: number): Promise<Rotated> {
    const a = await this.accounts.rotate(scope, id);
    return {
      id: a.id,
      clientId: a.clientId,
      clientSecret: a.clientSecret,
      name: a.name,
      workspace: a.workspace,
      updatedAt: a.updatedAt,
    };
  }
}
