import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, IntegerIdPipe, RequirePermission, UseErrorShape, UuidPipe } from '@strata/platform';
import { TriggerVersions } from './trigger-versions.service.js';

/** `{data_base}/function-triggers/{id}/versions`: the audit trail of a trigger's creates and updates. */
@ApiTags('function triggers')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/function-triggers')
export class TriggerVersionsController {
  constructor(private readonly versions: TriggerVersions) {}

  @Get(':id/versions')
  @ApiOperation({ summary: 'Every saved version, newest first (name, function, metadata, who, when)' })
  @RequirePermission('function-triggers', 'retrieve')
  list(@CallerScope() scope: WorkspaceScope, @Param('id', UuidPipe) id: string) {
    return this.versions.list(scope, id);
  }

  @Get(':id/versions/:version')
  @ApiOperation({ summary: 'One saved version' })
  @RequirePermission('function-triggers', 'retrieve')
  get(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Param('version', IntegerIdPipe) version: number,
  ) {
    return this.versions.get(scope, id, version);
  }
}
