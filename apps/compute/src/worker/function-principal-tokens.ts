import { Injectable } from '@nestjs/common';
import { functionPrincipalClientId, functionPrincipalSecret, parseFunctionPrincipalKey } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { clientCredentialsToken, StrataApiError } from '@strata/sdk';
import { ApiRefusal } from './api/handler.js';
import { ComputeConfig } from '../compute.config.js';

/** A token is renewed this long before it expires. */
const RENEW_BEFORE_MS = 5 * 60_000;

/**
 * Bearer tokens of each workspace's function principal, from the auth service's
 * token endpoint (client credentials; the secret derived from the shared key),
 * kept until shortly before they expire. One request per workspace at a time.
 */
@Injectable()
export class FunctionPrincipalTokens {
  private readonly key: Buffer;
  private readonly tokens = new Map<string, Promise<{ token: string; renewAt: number }>>();

  constructor(private readonly config: ComputeConfig) {
    this.key = parseFunctionPrincipalKey(config.STRATA_FUNCTIONS_PRINCIPAL_KEY);
  }

  async tokenFor(scope: WorkspaceScope): Promise<string> {
    const cached = this.tokens.get(scope.workspace);
    if (cached) {
      try {
        const held = await cached;
        if (Date.now() < held.renewAt) return held.token;
      } catch {
        // a failed request is not kept: ask again below
      }
    }
    const request = this.request(scope.workspace);
    this.tokens.set(scope.workspace, request);
    request.catch(() => {
      if (this.tokens.get(scope.workspace) === request) this.tokens.delete(scope.workspace);
    });
    return (await request).token;
  }

  /** Forgets a workspace's token (the data service refused it: revoked, rekeyed). */
  forget(scope: WorkspaceScope): void {
    this.tokens.delete(scope.workspace);
  }

  private async request(workspace: string): Promise<{ token: string; renewAt: number }> {
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
    const lifetimeMs = issued.expires_in * 1000;
    return { token: issued.access_token, renewAt: Date.now() + Math.max(lifetimeMs / 2, lifetimeMs - RENEW_BEFORE_MS) };
  }
}
