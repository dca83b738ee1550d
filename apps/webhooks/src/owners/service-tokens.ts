import { Injectable } from '@nestjs/common';
import { functionPrincipalClientId, functionPrincipalSecret, parseFunctionPrincipalKey } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { WebhooksConfig } from '../webhooks.config.js';

/** A token is renewed this long before it expires. */
const RENEW_BEFORE_MS = 5 * 60_000;
const TIMEOUT_MS = 5000;

/**
 * Bearer tokens of each workspace's function principal (client credentials, the
 * secret derived from STRATA_FUNCTIONS_PRINCIPAL_KEY): the identity the webhooks
 * service presents to the auth service. Kept until shortly before they expire;
 * one request per workspace at a time; a failed request is not kept.
 */
@Injectable()
export class ServiceTokens {
  private readonly key: Buffer;
  private readonly base: string;
  private readonly tokens = new Map<string, Promise<{ token: string; renewAt: number }>>();

  constructor(config: WebhooksConfig) {
    this.key = parseFunctionPrincipalKey(config.STRATA_FUNCTIONS_PRINCIPAL_KEY);
    this.base = config.AUTH_INTERNAL_URL.replace(/\/$/, '');
  }

  async tokenFor(scope: WorkspaceScope): Promise<string> {
    const cached = this.tokens.get(scope.workspace);
    if (cached) {
      const held = await cached.catch(() => undefined);
      if (held && Date.now() < held.renewAt) return held.token;
    }
    const request = this.request(scope.workspace);
    this.tokens.set(scope.workspace, request);
    request.catch(() => {
      if (this.tokens.get(scope.workspace) === request) this.tokens.delete(scope.workspace);
    });
    return (await request).token;
  }

  /** Forgets a workspace's token (the auth service refused it). */
  forget(scope: WorkspaceScope): void {
    this.tokens.delete(scope.workspace);
  }

  private async request(workspace: string): Promise<{ token: string; renewAt: number }> {
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
    const lifetimeMs = body.expires_in * 1000;
    return {
      token: body.access_token,
      renewAt: Date.now() + Math.max(lifetimeMs / 2, lifetimeMs - RENEW_BEFORE_MS),
    };
  }
}
