import { Controller, Get, Param, ParseEnumPipe } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { isFunctionPrincipalClientId } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import {
  Authenticated,
  CallerScope,
  CurrentPrincipal,
  RateLimit,
  StrataException,
  type PermissionsResponse,
  type Principal,
} from '@strata/platform';
import { PermissionsService } from './permissions.service.js';

enum MemberType {
  user = 'user',
  service_account = 'service_account',
}

/**
 * `{auth_url}/internal/workspaces/{workspace}/principals/{type}/{id}/permissions`:
 * what a user or service account may do in the workspace, for a service that
 * acts on its behalf without its credential (the webhooks service delivers a
 * subscription's events only from collections its owner may list). Only the
 * workspace's function principal, the identity the services present, may ask:
 * whom a workspace's members may see is no other member's business. Not routed
 * by the gateway.
 */
@ApiTags('internal')
@ApiBearerAuth()
@Controller('internal/workspaces/:workspace/principals')
export class MemberPermissionsController {
  constructor(private readonly permissions: PermissionsService) {}

  @Get(':type/:id/permissions')
  @Authenticated()
  @RateLimit('lookups')
  @ApiOperation({ summary: "A member's effective permissions, for the other services" })
  async member(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() caller: Principal,
    @Param('type', new ParseEnumPipe(MemberType)) type: MemberType,
    @Param('id') id: string,
  ): Promise<PermissionsResponse> {
    if (caller.type !== 'service_account' || !isFunctionPrincipalClientId(caller.id)) {
      throw StrataException.forbidden("Only the workspace's function principal may ask for a member's permissions");
    }
    const resolved = await this.permissions.resolveMember(scope, type, id);
    if (!resolved) throw StrataException.notFound(`No active ${type} '${id}' in workspace '${scope.workspace}'`);
    return {
      workspace: scope.workspace,
      principal: { type, id, groups: resolved.groups },
      permissions: resolved.permissions,
      collectionPermissions: Object.fromEntries(
        Object.entries(resolved.collections).map(([permission, slugs]) => [permission, [...slugs]]),
      ),
    };
  }
}
