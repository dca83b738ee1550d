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
} from '@strata/platform';
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
    @Param('workspace') workspace: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: CreateRecordRequest,
  ) {
    return this.records.create(workspace, principal.id, grants, body);
  }

  @Get()
  @RequirePermission('records', 'list')
  @ApiQuery({ type: ListRecordsQuery })
  async list(
    @Param('workspace') workspace: string,
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
    return this.records.list(workspace, grants, { id: query.structureId }, query, legacy);
  }

  @Get('slug/:recordSlug')
  @RequirePermission('records', 'list')
  @ApiQuery({ type: ListRecordsQuery })
  async listBySlug(
    @Param('workspace') workspace: string,
    @Param('recordSlug') recordSlug: string,
    @CallerGrants() grants: Grants,
    @Query() raw: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { query, legacy } = await listParams(raw, res);
    return this.records.list(workspace, grants, { slug: recordSlug }, query, legacy);
  }

  @Post('slug/:structureSlug/upsert')
  @RequireAllPermissions('records:create', 'records:update')
  async upsert(
    @Param('workspace') workspace: string,
    @Param('structureSlug') slug: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: UpsertRecordRequest,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpsertResult> {
    const result = await this.upserts.upsert(workspace, slug, principal.id, grants, body, idempotencyKey);
    res.status(result.status);
    return result.body;
  }

  @Get(':recordId')
  @RequirePermission('records', 'retrieve')
  get(
    @Param('workspace') workspace: string,
    @Param('recordId', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
    @Query() query: GetRecordQuery,
  ) {
    return this.records.get(workspace, id, grants, query);
  }

  @Patch(':recordId')
  @RequirePermission('records', 'update')
  patch(
    @Param('workspace') workspace: string,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: PatchRecordRequest,
    @Headers('if-match') ifMatch?: string,
  ) {
    return this.records.patch(workspace, id, principal.id, grants, body, parseIfMatch(ifMatch));
  }

  @Put(':recordId')
  @RequirePermission('records', 'update')
  replace(
    @Param('workspace') workspace: string,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: ReplaceRecordRequest,
    @Headers('if-match') ifMatch?: string,
  ) {
    return this.records.replace(workspace, id, principal.id, grants, body, parseIfMatch(ifMatch));
  }

  @Delete(':recordId')
  @RequirePermission('records', 'delete')
  delete(
    @Param('workspace') workspace: string,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @Query() query: DeleteRecordQuery,
    @Headers('if-match') ifMatch?: string,
  ) {
    return this.records.delete(workspace, id, principal.id, query.permanent ?? false, parseIfMatch(ifMatch));
  }

  @Get(':recordId/history')
  @RequirePermission('records', 'retrieve')
  history(
    @Param('workspace') workspace: string,
    @Param('recordId', UuidPipe) id: string,
    @CallerGrants() grants: Grants,
  ) {
    return this.records.history(workspace, id, grants);
  }

  @Post(':recordId/restore')
  @HttpCode(200)
  @RequirePermission('records', 'update')
  restore(
    @Param('workspace') workspace: string,
    @Param('recordId', UuidPipe) id: string,
    @CurrentPrincipal() principal: Principal,
    @CallerGrants() grants: Grants,
    @Body() body: RestoreRecordRequest,
  ) {
    return this.records.restore(workspace, id, principal.id, grants, body);
  }

  @Get(':recordId/changelog')
  @RequirePermission('records', 'retrieve')
  changelog(
    @Param('workspace') workspace: string,
    @Param('recordId', UuidPipe) id: string,
    @Query() query: ChangelogQuery,
  ) {
    return this.records.changelog(workspace, id, query);
  }
}
