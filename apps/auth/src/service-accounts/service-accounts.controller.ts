import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CurrentPrincipal,
  Deprecated,
  IntegerIdPipe,
  RequirePermission,
  UserOnly,
  type Principal,
} from '@strata/platform';
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
    @Param('workspace') workspace: string,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateServiceAccountRequest,
  ): Promise<ServiceAccountWithSecret> {
    return this.accounts.create(workspace, principal.id, body);
  }

  @Get()
  @RequirePermission('service-accounts', 'list')
  list(@Param('workspace') workspace: string, @Query() query: ListServiceAccountsQuery) {
    return this.accounts.list(workspace, query.page ?? 1, query.limit ?? 50);
  }

  @Get(':id')
  @RequirePermission('service-accounts', 'retrieve')
  get(@Param('workspace') workspace: string, @Param('id', IntegerIdPipe) id: number): Promise<ServiceAccount> {
    return this.accounts.get(workspace, id);
  }

  @Put(':id/name')
  @RequirePermission('service-accounts', 'update')
  rename(
    @Param('workspace') workspace: string,
    @Param('id', IntegerIdPipe) id: number,
    @Body() body: RenameServiceAccountRequest,
  ): Promise<ServiceAccount> {
    return this.accounts.rename(workspace, id, body.name);
  }

  @Put(':id/description')
  @RequirePermission('service-accounts', 'update')
  describe(
    @Param('workspace') workspace: string,
    @Param('id', IntegerIdPipe) id: number,
    @Body() body: DescribeServiceAccountRequest,
  ): Promise<ServiceAccount> {
    return this.accounts.describe(workspace, id, body.description);
  }

  @Post(':id/rotate')
  @HttpCode(200)
  @RequirePermission('service-accounts', 'update')
  rotate(@Param('workspace') workspace: string, @Param('id', IntegerIdPipe) id: number): Promise<Rotated> {
    return this.rotated(workspace, id);
  }

  @Put(':id/rotate')
  @ApiOperation({
    deprecated: true,
    summary: 'Older form of POST …/rotate (reached as PUT {base_url}/iam/workspace/…)',
  })
  @Deprecated({ sunset: '2026-10-29', successor: '/workspace/:workspace/api/v1/service-accounts/:id/rotate' })
  @RequirePermission('service-accounts', 'update')
  rotateLegacy(@Param('workspace') workspace: string, @Param('id', IntegerIdPipe) id: number): Promise<Rotated> {
    return this.rotated(workspace, id);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @RequirePermission('service-accounts', 'update')
  revoke(@Param('workspace') workspace: string, @Param('id', IntegerIdPipe) id: number): Promise<ServiceAccount> {
    return this.accounts.revoke(workspace, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('service-accounts', 'delete')
  async delete(@Param('workspace') workspace: string, @Param('id', IntegerIdPipe) id: number): Promise<void> {
    await this.accounts.delete(workspace, id);
  }

  private async rotated(workspace: string, id: number): Promise<Rotated> {
    const a = await this.accounts.rotate(workspace, id);
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
