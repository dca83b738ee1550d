import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CallerGrants, RequirePermission, type Grants, CallerScope } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { LanguageQueryRequest } from './language.request.js';
import { LanguageService, type LanguageResult } from './language.service.js';

/** `{data_base}/query`: the string query language. */
@ApiTags('queries')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/query')
export class LanguageController {
  constructor(private readonly language: LanguageService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Run a query in the string language (docs/queries.md)' })
  @RequirePermission('records', 'list')
  run(
    @CallerScope() scope: WorkspaceScope,
    @CallerGrants() grants: Grants,
    @Body() body: LanguageQueryRequest,
  ): Promise<LanguageResult> {
    return this.language.run(scope, grants, body);
  }
}
