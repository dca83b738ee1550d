import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerGrants, CallerScope, RateLimit, RequirePermission, type Grants } from '@strata/platform';
import { CheckedBodyPipe, type CheckedBody } from '../schema/checked-body.js';
import { CanonicalQueryRequest } from './dto/canonical.request.js';
import { QueryService, type QueryResult } from './query.service.js';

/** `{data_base}/records/query`: registered before the single-record routes. */
@ApiTags('queries')
@ApiBearerAuth()
@Controller('data/workspace/:workspace/api/v1/records')
export class QueryController {
  constructor(private readonly queries: QueryService) {}

  @Post('query')
  @RateLimit('read') // a query reads, whatever its method (spec 3: read and write operations)
  @HttpCode(200)
  @ApiOperation({ summary: 'Run a canonical query definition; answers {data, meta}' })
  @ApiBody({ type: CanonicalQueryRequest })
  @RequirePermission('records', 'list')
  run(
    @CallerScope() scope: WorkspaceScope,
    @CallerGrants() grants: Grants,
    @Body(new CheckedBodyPipe(CanonicalQueryRequest)) checked: CheckedBody<CanonicalQueryRequest>,
  ): Promise<QueryResult> {
    return this.queries.run(scope, grants, checked.body, checked.problems);
  }
}
