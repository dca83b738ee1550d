import { Body, Controller, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, RequirePermission, UseErrorShape } from '@strata/platform';
import { BucketsService } from './buckets.service.js';
import { CreateBucketRequest, UpdateBucketRequest } from './dto/bucket.requests.js';

/** `{storage_base}/buckets`: where files go, with their limits and link keys. */
@ApiTags('buckets')
@ApiBearerAuth()
@UseErrorShape('general')
@Controller('storage/workspace/:workspace/api/v1/buckets')
export class BucketsController {
  constructor(private readonly buckets: BucketsService) {}

  @Post()
  @ApiOperation({ summary: 'Creates a bucket: size limit, allowed types (image/* wildcards), default visibility' })
  @RequirePermission('buckets', 'create')
  create(@CallerScope() scope: WorkspaceScope, @Body() body: CreateBucketRequest) {
    return this.buckets.create(scope, body);
  }

  @Get()
  @ApiOperation({ summary: 'The buckets of the workspace, `default` included' })
  @RequirePermission('buckets', 'list')
  list(@CallerScope() scope: WorkspaceScope) {
    return this.buckets.list(scope);
  }

  @Get(':name')
  @ApiOperation({ summary: 'One bucket' })
  @RequirePermission('buckets', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('name') name: string) {
    return this.buckets.get(scope, name);
  }

  @Patch(':name')
  @ApiOperation({
    summary: 'Changes a bucket’s size limit, allowed types or default visibility (files kept as they are)',
  })
  @RequirePermission('buckets', 'update')
  update(@CallerScope() scope: WorkspaceScope, @Param('name') name: string, @Body() body: UpdateBucketRequest) {
    return this.buckets.update(scope, name, body);
  }

  @Post(':name/rotate-link-key')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new signed-link key: every link signed before is refused from now on' })
  @RequirePermission('buckets', 'update')
  rotate(@CallerScope() scope: WorkspaceScope, @Param('name') name: string) {
    return this.buckets.rotateLinkKey(scope, name);
  }
}
