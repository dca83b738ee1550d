import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ErrorCode } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { Clock, Public, StrataException, UseErrorShape } from '@strata/platform';
import { BucketsService } from '../buckets/buckets.service.js';
import { StorageDriver } from '../drivers/storage-driver.js';
import { FilesService } from '../files/files.service.js';
import { sendFile } from './send-file.js';
import { linkValid } from './signed-links.js';

const REFUSED = 'This link is invalid or has expired.';
/** A workspace slug, as the routing table takes it. */
const WORKSPACE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Downloads without a credential: signed links (checked against the bucket's link
 * key, in constant time, before anything of the file is said) and files whose
 * visibility is `public`. A refused link says nothing of whether the file exists.
 */
@ApiTags('files')
@UseErrorShape('general')
@Controller('storage/workspace/:workspace/api/v1')
export class OpenDownloadsController {
  constructor(
    private readonly files: FilesService,
    private readonly buckets: BucketsService,
    private readonly driver: StorageDriver,
    private readonly clock: Clock,
  ) {}

  @Get('signed/files/:id')
  @Public()
  @ApiOperation({ summary: 'The bytes of a file through a signed link (expires, signature)' })
  async signed(
    @Param('workspace') workspace: string,
    @Param('id') id: string,
    @Query('expires') expires: string | undefined,
    @Query('signature') signature: string | undefined,
    @Query('download') download: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (!WORKSPACE.test(workspace)) throw new StrataException(ErrorCode.PERMISSION_DENIED, REFUSED);
    // The workspace a signed link names: trusted only once its signature checks out below.
    const scope = issueWorkspaceScope(workspace);
    const at = /^\d{1,12}$/.test(expires ?? '') ? Number(expires) : undefined;
    const file = await this.files.require(scope, id).catch(() => undefined);
    const bucket = file ? await this.buckets.require(scope, undefined, file.bucket).catch(() => undefined) : undefined;
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const valid =
      file !== undefined &&
      bucket !== undefined &&
      at !== undefined &&
      linkValid(this.buckets.linkKeyOf(bucket), { workspace, fileId: file.id, expires: at }, signature ?? '', now);
    if (!valid || !file || at === undefined) throw new StrataException(ErrorCode.PERMISSION_DENIED, REFUSED);
    const maxAge = Math.max(0, at - now);
    await sendFile(req, res, this.driver, file, {
      download: download === 'true',
      cacheControl: `private, max-age=${maxAge}`,
    });
  }

  @Get('public/files/:id')
  @Public()
  @ApiOperation({ summary: 'The bytes of a file whose visibility is public' })
  async open(
    @Param('workspace') workspace: string,
    @Param('id') id: string,
    @Query('download') download: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (!WORKSPACE.test(workspace)) throw StrataException.notFound('File not found.');
    // A public file's workspace: only files marked public are served through it.
    const scope = issueWorkspaceScope(workspace);
    const file = await this.files.require(scope, id);
    if (file.visibility !== 'public') throw StrataException.notFound('File not found.');
    await sendFile(req, res, this.driver, file, { download: download === 'true', cacheControl: 'public, max-age=60' });
  }
}
