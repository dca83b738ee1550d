import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, CurrentPrincipal, RequirePermission, UseErrorShape, type Principal } from '@strata/platform';
import { StorageDriver } from '../drivers/storage-driver.js';
import { sendFile } from '../downloads/send-file.js';
import { UploadsService } from '../upload/uploads.service.js';
import { FileGetQuery, FileListQuery } from './dto/file-list.query.js';
import { SignRequest } from './dto/sign.request.js';
import { FilesService } from './files.service.js';

/** Whether the caller asked for the bytes: `?alt=media`, or an `Accept` that takes no JSON. */
export function wantsBytes(alt: string | undefined, accept: string | undefined): boolean {
  if (alt !== undefined) return alt === 'media';
  if (!accept) return false;
  return !/(?:^|,)\s*(?:application\/json|application\/\*|\*\/\*)/i.test(accept);
}

/** `{storage_base}` = `{base_url}/storage/workspace/{workspace}/api/v1`: uploads and files. */
@ApiTags('files')
@ApiBearerAuth()
@UseErrorShape('general')
@Controller('storage/workspace/:workspace/api/v1')
export class FilesController {
  constructor(
    private readonly files: FilesService,
    private readonly uploads: UploadsService,
    private readonly driver: StorageDriver,
  ) {}

  @Post('upload')
  @ApiConsumes('multipart/form-data')
  @ApiOperation({
    summary:
      'Uploads one file (multipart/form-data: bucket, name, visibility, metadata, link, then file), streamed; 201 with the file',
  })
  @RequirePermission('files', 'create')
  async upload(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    try {
      const answer = await this.uploads.upload(scope, principal.id, req, idempotencyKey);
      res.status(answer.status).json(answer.body);
    } catch (err) {
      // A body not read to its end: the connection is not reused for another request.
      if (!req.complete) res.setHeader('Connection', 'close');
      throw err;
    }
  }

  @Get('files')
  @ApiOperation({ summary: 'Files: filters, folders (prefix + delimiter=/), sort, keyset pages, total when asked' })
  @RequirePermission('files', 'list')
  list(@CallerScope() scope: WorkspaceScope, @Query() query: FileListQuery) {
    return this.files.list(scope, query);
  }

  @Get('files/:id')
  @ApiOperation({ summary: 'A file’s metadata; its bytes with ?alt=media (Range, If-None-Match)' })
  @RequirePermission('files', 'retrieve')
  async get(
    @CallerScope() scope: WorkspaceScope,
    @Param('id') id: string,
    @Query() query: FileGetQuery,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.files.require(scope, id);
    if (!wantsBytes(query.alt, req.headers.accept)) {
      res.status(200).json(this.files.view(file));
      return;
    }
    await sendFile(req, res, this.driver, file, {
      download: query.download === true,
      cacheControl: 'private, no-cache',
    });
  }

  @Delete('files/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Deletes a file: gone from reads at once, its bytes purged in the background' })
  @RequirePermission('files', 'delete')
  async delete(@CallerScope() scope: WorkspaceScope, @Param('id') id: string): Promise<void> {
    await this.files.delete(scope, id);
  }

  @Post('files/:id/sign')
  @HttpCode(200)
  @ApiOperation({ summary: 'A URL that serves the file with no credential until it expires (at most 7 days)' })
  @RequirePermission('files', 'retrieve')
  sign(@CallerScope() scope: WorkspaceScope, @Param('id') id: string, @Body() body: SignRequest, @Req() req: Request) {
    const base = `${req.protocol}://${req.host}/storage/workspace/${scope.workspace}/api/v1`;
    return this.files.sign(scope, id, body, base);
  }
}
