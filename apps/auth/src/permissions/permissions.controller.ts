import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import {
  Authenticated,
  CallerScope,
  CurrentPrincipal,
  RateLimit,
  type PermissionsResponse,
  type Principal,
} from '@strata/platform';
import { PermissionsService } from './permissions.service.js';

/**
 * `{auth_url}/workspace/{workspace}/api/v1/permissions/me`: what the presented
 * credential may do in the workspace. The other services call it with the
 * caller's own credential and cache the answer briefly.
 */
@ApiTags('permissions')
@ApiBearerAuth()
@ApiSecurity('publishable-key')
@Controller('workspace/:workspace/api/v1/permissions')
export class PermissionsController {
  constructor(private readonly permissions: PermissionsService) {}

  @Get('me')
  @Authenticated()
  // The services' lookups on their callers' behalf: a budget of their own, not the workspace's reads.
  @RateLimit('lookups')
  @ApiOperation({ summary: 'Effective permissions of the caller in the workspace' })
  async me(
    @CallerScope() scope: WorkspaceScope,
    @CurrentPrincipal() principal: Principal,
  ): Promise<PermissionsResponse> {
    const resolved = await this.permissions.resolve(principal, scope);
    return {
      workspace: scope.workspace,
      principal: {
        type: principal.type,
        id: principal.id,
        groups: resolved.groups,
        ...(resolved.displayName !== undefined ? { displayName: resolved.displayName } : {}),
      },
      permissions: resolved.permissions,
      collectionPermissions: Object.fromEntries(
        Object.entries(resolved.collections).map(([permission, slugs]) => [permission, [...slugs]]),
      ),
    };
  }
}
