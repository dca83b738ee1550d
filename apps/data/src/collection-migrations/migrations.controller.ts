import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import {
  CallerScope,
  CurrentPrincipal,
  PageQuery,
  RequirePermission,
  UuidPipe,
  type Principal,
} from '@strata/platform';
import { MigrationsService, type MigrationFailure, type MigrationResponse, type Page } from './migrations.service.js';

const BASE = 'data/workspace/:workspace/api/v1';

/**
 * `{data_base}/structures/{id}/migrations` (also under `/collections`): the jobs that
 * convert a collection's records to a changed definition (docs/data.md, "Migrations").
 */
@ApiTags('collections')
@ApiBearerAuth()
@Controller([`${BASE}/structures/:id/migrations`, `${BASE}/collections/:id/migrations`])
export class MigrationsController {
  constructor(private readonly migrations: MigrationsService) {}

  @Get()
  @ApiOperation({ summary: "A collection's migrations, newest first" })
  @RequirePermission('structures', 'retrieve')
  list(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Query() query: PageQuery,
  ): Promise<Page<MigrationResponse>> {
    return this.migrations.list(scope, id, query);
  }

  @Get(':jobId')
  @ApiOperation({ summary: 'A migration with its progress and its first listed records' })
  @RequirePermission('structures', 'retrieve')
  get(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Param('jobId', UuidPipe) jobId: string,
  ): Promise<MigrationResponse> {
    return this.migrations.get(scope, id, jobId);
  }

  @Get(':jobId/failures')
  @ApiOperation({ summary: 'Every record a migration could not convert (or put back), by record id' })
  @RequirePermission('structures', 'retrieve')
  failures(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Param('jobId', UuidPipe) jobId: string,
    @Query() query: PageQuery,
  ): Promise<Page<MigrationFailure>> {
    return this.migrations.failures(scope, id, jobId, query);
  }

  @Post(':jobId/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a running migration: the old definition is back and the records follow' })
  @RequirePermission('structures', 'update')
  cancel(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Param('jobId', UuidPipe) jobId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<MigrationResponse> {
    return this.migrations.cancel(scope, id, jobId, principal.id);
  }
}
