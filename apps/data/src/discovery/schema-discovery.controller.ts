import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission, UuidPipe, type Principal, CallerScope } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { ListSuggestionsQuery, UpdateDiscoverySettingsRequest } from './dto/discovery.requests.js';
import { SchemaDiscoveryService } from './schema-discovery.service.js';

/** `{data_base}/structures/{slug}/schema-discovery` and `/schema-suggestions`. */
@ApiTags('schema discovery')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/structures/:recordSlug')
export class SchemaDiscoveryController {
  constructor(private readonly discovery: SchemaDiscoveryService) {}

  @Get('schema-discovery')
  @RequirePermission('structures', 'retrieve')
  settings(@CallerScope() scope: WorkspaceScope, @Param('recordSlug') slug: string) {
    return this.discovery.settings(scope, slug);
  }

  @Put('schema-discovery')
  @RequirePermission('structures', 'update')
  updateSettings(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordSlug') slug: string,
    @CurrentPrincipal() principal: Principal,
    @Body() body: UpdateDiscoverySettingsRequest,
  ) {
    return this.discovery.updateSettings(scope, slug, principal.id, body);
  }

  @Post('schema-discovery/scan')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  scan(@CallerScope() scope: WorkspaceScope, @Param('recordSlug') slug: string) {
    return this.discovery.scan(scope, slug, false);
  }

  @Post('schema-discovery/trigger')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  trigger(@CallerScope() scope: WorkspaceScope, @Param('recordSlug') slug: string) {
    return this.discovery.scan(scope, slug, true);
  }

  @Get('schema-suggestions')
  @RequirePermission('structures', 'retrieve')
  suggestions(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordSlug') slug: string,
    @Query() query: ListSuggestionsQuery,
  ) {
    return this.discovery.suggestions(scope, slug, query.status);
  }

  @Post('schema-suggestions/:id/accept')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  accept(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordSlug') slug: string,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.discovery.accept(scope, slug, id, principal.id);
  }

  @Post('schema-suggestions/:id/reject')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  reject(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordSlug') slug: string,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.discovery.reject(scope, slug, id, principal.id);
  }
}
