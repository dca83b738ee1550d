import { Injectable } from '@nestjs/common';
import { functionPrincipalClientId, functionPrincipalSecret, parseFunctionPrincipalKey } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { WorkspaceTokens, type IssuedToken } from '@strata/platform';
import { clientCredentialsToken, StrataApiError } from '@strata/sdk';
import { ApiRefusal } from './api/handler.js';
import { ComputeConfig } from '../compute.config.js';

/**
 * Bearer tokens of each workspace's function principal, from the auth service's
 * token endpoint (client credentials; the secret derived from the shared key),
 * kept per workspace by `WorkspaceTokens`.
 */
@Injectable()
export class FunctionPrincipalTokens {
  private readonly key: Buffer;
  private readonly tokens = new WorkspaceTokens((workspace) => this.request(workspace));

  constructor(private readonly config: ComputeConfig) {
    this.key = parseFunctionPrincipalKey(config.STRATA_FUNCTIONS_PRINCIPAL_KEY);
  }

  tokenFor(scope: WorkspaceScope): Promise<string> {
    return this.tokens.tokenFor(scope);
  }

  /** Forgets a workspace's token (the data service refused it: revoked, rekeyed). */
  forget(scope: WorkspaceScope): void {
    this.tokens.forget(scope);
  }

  private async request(workspace: string): Promise<IssuedToken> {
    const clientId = functionPrincipalClientId(workspace);
    const issued = await clientCredentialsToken(
      this.config.AUTH_INTERNAL_URL,
      clientId,
      functionPrincipalSecret(this.key, clientId),
      'openid',
    ).catch((err: unknown) => {
      // Refused by the token endpoint (the principal revoked or deleted): a refusal the function can
      // act on, not a platform failure. Anything else (the auth service unreachable) stays one.
      if (err instanceof StrataApiError && (err.status === 400 || err.status === 401)) {
        throw new ApiRefusal(
          `401: the workspace's function principal (${clientId}) is refused tokens (${err.code ?? err.status}): ` +
            'an administrator revoked or deleted it, so functions reach nothing on the platform',
        );
      }
      throw err;
    });
    return { token: issued.access_token, expiresInSeconds: issued.expires_in };
  }
}
