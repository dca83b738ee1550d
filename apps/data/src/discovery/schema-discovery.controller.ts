import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission, UuidPipe, type Principal } from '@strata/platform';
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
  settings(@Param('workspace') workspace: string, @Param('recordSlug') slug: string) {
    return this.discovery.settings(workspace, slug);
  }

  @Put('schema-discovery')
  @RequirePermission('structures', 'update')
  updateSettings(
    @Param('workspace') workspace: string,
    @Param('recordSlug') slug: string,
    @CurrentPrincipal() principal: Principal,
    @Body() body: UpdateDiscoverySettingsRequest,
  ) {
    return this.discovery.updateSettings(workspace, slug, principal.id, body);
  }

  @Post('schema-discovery/scan')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  scan(@Param('workspace') workspace: string, @Param('recordSlug') slug: string) {
    return this.discovery.scan(workspace, slug, false);
  }

  @Post('schema-discovery/trigger')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  trigger(@Param('workspace') workspace: string, @Param('recordSlug') slug: string) {
    return this.discovery.scan(workspace, slug, true);
  }

  @Get('schema-suggestions')
  @RequirePermission('structures', 'retrieve')
  suggestions(
    @Param('workspace') workspace: string,
    @Param('recordSlug') slug: string,
    @Query() query: ListSuggestionsQuery,
  ) {
    return this.discovery.suggestions(workspace, slug, query.status);
  }

  @Post('schema-suggestions/:id/accept')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  accept(
    @Param('workspace') workspace: string,
    @Param('recordSlug') slug: string,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.discovery.accept(workspace, slug, id, principal.id);
  }

  @Post('schema-suggestions/:id/reject')
  @HttpCode(200)
  @RequirePermission('structures', 'update')
  reject(
    @Param('workspace') workspace: string,
    @Param('recordSlug') slug: string,
    @Param('id', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.discovery.reject(workspace, slug, id, principal.id);
  }
}
