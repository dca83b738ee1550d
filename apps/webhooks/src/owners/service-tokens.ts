import { Injectable } from '@nestjs/common';
import { functionPrincipalClientId, functionPrincipalSecret, parseFunctionPrincipalKey } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { WorkspaceTokens, type IssuedToken } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';

const TIMEOUT_MS = 5000;

/**
 * Bearer tokens of each workspace's function principal (client credentials, the
 * secret derived from STRATA_FUNCTIONS_PRINCIPAL_KEY): the identity the webhooks
 * service presents to the auth service, kept per workspace by `WorkspaceTokens`.
 */
@Injectable()
export class ServiceTokens {
  private readonly key: Buffer;
  private readonly base: string;
  private readonly tokens = new WorkspaceTokens((workspace) => this.request(workspace));

  constructor(config: WebhooksConfig) {
    this.key = parseFunctionPrincipalKey(config.STRATA_FUNCTIONS_PRINCIPAL_KEY);
    this.base = config.AUTH_INTERNAL_URL.replace(/\/$/, '');
  }

  tokenFor(scope: WorkspaceScope): Promise<string> {
    return this.tokens.tokenFor(scope);
  }

  /** Forgets a workspace's token (the auth service refused it). */
  forget(scope: WorkspaceScope): void {
    this.tokens.forget(scope);
  }

  private async request(workspace: string): Promise<IssuedToken> {
    const clientId = functionPrincipalClientId(workspace);
    const res = await fetch(`${this.base}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: functionPrincipalSecret(this.key, clientId),
        scope: 'openid',
      }).toString(),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`the token endpoint answered ${res.status} for ${clientId}`);
    const body = (await res.json()) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || typeof body.expires_in !== 'number')
      throw new Error('the token endpoint answered no token');
    return { token: body.access_token, expiresInSeconds: body.expires_in };
  }
}
