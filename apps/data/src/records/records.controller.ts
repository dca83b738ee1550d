import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Res,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  CallerGrants,
  RequireAllPermissions,
  CurrentPrincipal,
  RequirePermission,
  StrataException,
  UuidPipe,
  type Grants,
  type Principal,
  CallerScope,
} from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import {
  ChangelogQuery,
  CreateRecordRequest,
  DeleteRecordQuery,
  GetRecordQuery,
  ListRecordsQuery,
  PatchRecordRequest,
  ReplaceRecordRequest,
  RestoreRecordRequest,
} from './dto/record.requests.js';
import { parseIfMatch } from './if-match.js';
import { listParams } from './list-params.js';
import { RecordsService } from './records.service.js';
import { UpsertRecordRequest } from './dto/upsert.requests.js';
import { UpsertService, type UpsertResult } from './upsert.service.js';
import { WakeOutboxRelay } from '../events/wake-outbox-relay.interceptor.js';

/** `{data_base}/records`. */
@ApiTags('records')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/records')
@UseInterceptors(WakeOutboxRelay)
export class RecordsController {
  constructor(
    private readonly records: RecordsService,
    private readonly upserts: UpsertService,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('records', 'create')
  create(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: CreateRecordRequest,
  ) {
    return this.records.create(scope, principal.id, grants, body);
  }

  @Get()
  @RequirePermission('records', 'list')
  @ApiQuery({ type: ListRecordsQuery })
  async list(
    @CallerScope() scope: WorkspaceScope,
    @CallerGrants() grants: Grants,
    @Query() raw: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { query, legacy } = await listParams(raw, res);
    if (!query.structureId) {
      throw StrataException.validation([
        { field: 'structureId', message: 'is required (or use /records/slug/{recordSlug})' },
      ]);
    }
    return this.records.list(scope, grants, { id: query.structureId }, query, legacy);
  }

  @Get('slug/:recordSlug')
  @RequirePermission('records', 'list')
  @ApiQuery({ type: ListRecordsQuery })
  async listBySlug(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordSlug') recordSlug: string,
    @CallerGrants() grants: Grants,
    @Query() raw: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { query, legacy } = await listParams(raw, res);
    return this.records.list(scope, grants, { slug: recordSlug }, query, legacy);
  }

  @Post('slug/:structureSlug/upsert')
  @RequireAllPermissions('records:create', 'records:update')
  async upsert(
    @CallerScope() scope: WorkspaceScope,
    @Param('structureSlug') slug: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: UpsertRecordRequest,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpsertResult> {
    const result = await this.upserts.upsert(scope, slug, principal.id, grants, body, idempotencyKey);
    res.status(result.status);
    return result.body;
  }

  @Get(':recordId')
  @RequirePermission('records', 'retrieve')
  get(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordId', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
    @Query() query: GetRecordQuery,
  ) {
    return this.records.get(scope, id, grants, query);
  }

  @Patch(':recordId')
  @RequirePermission('records', 'update')
  patch(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: PatchRecordRequest,
    @Headers('if-match') ifMatch?: string,
  ) {
    return this.records.patch(scope, id, principal.id, grants, body, parseIfMatch(ifMatch));
  }

  @Put(':recordId')
  @RequirePermission('records', 'update')
  replace(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: ReplaceRecordRequest,
    @Headers('if-match') ifMatch?: string,
  ) {
    return this.records.replace(scope, id, principal.id, grants, body, parseIfMatch(ifMatch));
  }

  @Delete(':recordId')
  @RequirePermission('records', 'delete')
  delete(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Query() query: DeleteRecordQuery,
    @Headers('if-match') ifMatch?: string,
  ) {
    return this.records.delete(scope, id, principal.id, grants, query.permanent ?? false, parseIfMatch(ifMatch));
  }

  @Get(':recordId/history')
  @RequirePermission('records', 'retrieve')
  history(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordId', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
  ) {
    return this.records.versions(scope, id, grants);
  }

  @Post(':recordId/restore')
  @HttpCode(200)
  @RequirePermission('records', 'update')
  restore(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: RestoreRecordRequest,
  ) {
    return this.records.restore(scope, id, principal.id, grants, body);
  }

  @Get(':recordId/changelog')
  @RequirePermission('records', 'retrieve')
  changelog(
    @CallerScope() scope: WorkspaceScope,
    @Param('recordId', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
    @Query() query: ChangelogQuery,
  ) {
    return this.records.changelog(scope, id, grants, query);
  }
}
