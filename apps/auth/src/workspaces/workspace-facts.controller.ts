import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceFacts } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import {
  Authenticated,
  CallerScope,
  CurrentPrincipal,
  RateLimit,
  StrataException,
  type Principal,
} from '@strata/platform';
import { WorkspacesService } from './workspaces.service.js';

/**
 * `{auth_url}/internal/workspaces/{workspace}`: facts about a workspace for the
 * other services (its creator, to whom the compute service attributes the
 * isolates its runs lose). Guarded as `permissions/me` is: a bearer token of
 * that workspace (a service presents its function principal's), no particular
 * permission. Not routed by the gateway.
 */
@ApiTags('internal')
@ApiBearerAuth()
@Controller('internal/workspaces')
export class WorkspaceFactsController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Get(':workspace')
  @Authenticated()
  // Asked by the services on their own behalf: the lookups budget, as permissions/me.
  @RateLimit('lookups')
  @ApiOperation({ summary: 'The workspace and its creator, for the other services' })
  facts(@CallerScope() scope: WorkspaceScope, @CurrentPrincipal() principal: Principal): Promise<WorkspaceFacts> {
    // A publishable key is handed to browsers: who created the workspace is none of theirs.
    if (principal.type === 'publishable_key') {
      throw StrataException.forbidden('A publishable key cannot call this endpoint');
    }
    return this.workspaces.facts(scope);
  }
}
