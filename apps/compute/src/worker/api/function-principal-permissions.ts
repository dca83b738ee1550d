import { Injectable } from '@nestjs/common';
import { permits } from '@strata/contracts';
import { functionPrincipalClientId } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { PermissionResolver, type Principal } from '@strata/platform';
import { FunctionPrincipalTokens } from '../function-principal-tokens.js';

/**
 * What a workspace's function principal may do, for the `api` methods the
 * worker serves itself instead of calling a service (`invokeTrigger`): resolved
 * as every service resolves a caller (the auth service, presented the
 * principal's own token, cached for PERMISSION_CACHE_TTL_MS), so its group's
 * policies and a revocation bind these calls as they bind its data calls.
 */
@Injectable()
export class FunctionPrincipalPermissions {
  constructor(
    private readonly tokens: FunctionPrincipalTokens,
    private readonly resolver: PermissionResolver,
  ) {}

  /** Whether the principal holds `resource:action` now; the resolver's 401 (revoked) or 503 is thrown. */
  async holds(scope: WorkspaceScope, resource: string, action: string): Promise<boolean> {
    const token = await this.tokens.tokenFor(scope);
    const principal: Principal = {
      type: 'service_account',
      id: functionPrincipalClientId(scope.workspace),
      workspace: scope.workspace,
      groups: [],
      scopes: [],
      credential: { kind: 'bearer', token },
    };
    const { permissions } = await this.resolver.resolve(principal, scope);
    return permits(permissions, resource, action);
  }
}
