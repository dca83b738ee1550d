import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, CurrentPrincipal, RequirePermission, UseErrorShape, type Principal } from '@strata/platform';
import { AllowedDomainsService } from './allowed-domains.service.js';
import { AddAllowedDomainRequest } from './dto/allowed-domain.requests.js';

/**
 * `{data_base}/compute-functions/allowed-domains`: where functions may send
 * requests. Reading needs compute-functions:list; changing it, which decides
 * where code may send a workspace's data, needs compute-functions:manage.
 */
@ApiTags('compute functions')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/compute-functions/allowed-domains')
export class AllowedDomainsController {
  constructor(private readonly domains: AllowedDomainsService) {}

  @Get()
  @ApiOperation({ summary: 'The domains api.fetch and api.httpPost may call' })
  @RequirePermission('compute-functions', 'list')
  list(@CallerScope() scope: WorkspaceScope) {
    return this.domains.list(scope);
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Allows a domain (api.example.com, or *.example.com for the names under it)' })
  @RequirePermission('compute-functions', 'manage')
  add(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Body() body: AddAllowedDomainRequest,
  ) {
    return this.domains.add(scope, principal.id, body.domain);
  }

  @Delete(':domain')
  @RequirePermission('compute-functions', 'manage')
  remove(@CallerScope() scope: WorkspaceScope, @Param('domain') domain: string) {
    return this.domains.remove(scope, domain);
  }
}
