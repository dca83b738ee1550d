import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, RequirePermission, UseErrorShape, UuidPipe } from '@strata/platform';
import { RunDocumentsService } from './run-documents.service.js';

/** `{data_base}/function-runs/{id}/documents`: what a run kept with `api.storeAsJSON`, until it expires. */
@ApiTags('function runs')
@ApiBearerAuth()
@UseErrorShape('functions')
@Controller('data/workspace/:workspace/api/v1/function-runs/:runId/documents')
export class RunDocumentsController {
  constructor(private readonly documents: RunDocumentsService) {}

  @Get()
  @ApiOperation({ summary: "The run's stored documents (without content), oldest first" })
  @RequirePermission('function-runs', 'retrieve')
  list(@CallerScope() scope: WorkspaceScope, @Param('runId', UuidPipe) runId: string) {
    return this.documents.list(scope, runId);
  }

  @Get(':documentId')
  @ApiOperation({ summary: 'One stored document with its content' })
  @RequirePermission('function-runs', 'retrieve')
  get(
    @CallerScope() scope: WorkspaceScope,
    @Param('runId', UuidPipe) runId: string,
    @Param('documentId', UuidPipe) documentId: string,
  ) {
    return this.documents.get(scope, runId, documentId);
  }
}
