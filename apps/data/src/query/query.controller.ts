import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CallerGrants, RequirePermission, type Grants, CallerScope } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import { CanonicalQueryRequest } from './dto/canonical.request.js';
import { QueryService, type QueryResult } from './query.service.js';

/** `{data_base}/records/query`: registered before the single-record routes. */
@ApiTags('queries')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/records')
export class QueryController {
  constructor(private readonly queries: QueryService) {}

  @Post('query')
  @HttpCode(200)
  @ApiOperation({ summary: 'Run a canonical query definition; answers {data, meta}' })
  @RequirePermission('records', 'list')
  run(
    @CallerScope() scope: WorkspaceScope,
    @CallerGrants() grants: Grants,
    @Body() body: CanonicalQueryRequest,
  ): Promise<QueryResult> {
    return this.queries.run(scope, grants, body);
  }
}
