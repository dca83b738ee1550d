import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerGrants, CallerScope, RateLimit, RequirePermission, type Grants } from '@strata/platform';
import { CheckedBodyPipe, type CheckedBody } from '../../schema/checked-body.js';
import { LanguageQueryRequest } from './language.request.js';
import { LanguageService, type LanguageResult } from './language.service.js';

/** `{data_base}/query`: the string query language. */
@ApiTags('queries')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/query')
export class LanguageController {
  constructor(private readonly language: LanguageService) {}

  @Post()
  @RateLimit('read') // a query reads, whatever its method (spec 3: read and write operations)
  @HttpCode(200)
  @ApiOperation({ summary: 'Run a query in the string language (docs/queries.md)' })
  @ApiBody({ type: LanguageQueryRequest })
  @RequirePermission('records', 'list')
  run(
    @CallerScope() scope: WorkspaceScope,
    @CallerGrants() grants: Grants,
    @Body(new CheckedBodyPipe(LanguageQueryRequest)) checked: CheckedBody<LanguageQueryRequest>,
  ): Promise<LanguageResult> {
    return this.language.run(scope, grants, checked.body, checked.problems);
  }
}
