import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Request, Response } from 'express';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { issueWorkspaceScope } from '@strata/db';
import { AuthConfig } from '../auth.config.js';
import { secretMatches, ServiceAccountsService } from '../service-accounts/service-accounts.service.js';
import { UsersService } from '../users/users.service.js';
import { PermissionsService } from '../permissions/permissions.service.js';
import { LoginWorkspacesRepository } from './login-workspaces.repository.js';
import { OidcPayloadsRepository } from './oidc-payloads.repository.js';
import { SIGNING_ALG, SigningKeysService } from './signing-keys.service.js';
import { CLI_CLIENT_ID, CLI_REDIRECT_URI } from './cli-client.js';

/** OAuth scopes the API resource server knows. Unknown scopes are dropped by the provider. */
export const API_SCOPES = ['openid', 'webhooks:replay', 'webhooks:cancel'];

/**
 * Holds the node-oidc-provider instance mounted at `{auth_url}/oidc`. Each
 * replica reloads the signing keys periodically and rebuilds the provider when
 * they change, so a rotation reaches every replica without a restart.
 */
@Injectable()
export class OidcService implements OnApplicationShutdown {
  private readonly logger = new Logger('Oidc');
  private provider: Provider | undefined;
  private keyIds = '';
  private cookieKeys: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: AuthConfig,
    private readonly payloads: OidcPayloadsRepository,
    private readonly loginWorkspaces: LoginWorkspacesRepository,
    private readonly keys: SigningKeysService,
    private readonly users: UsersService,
    private readonly serviceAccounts: ServiceAccountsService,
    private readonly permissions: PermissionsService,
  ) {}

  async start(): Promise<void> {
    await this.keys.ensureKey();
    this.cookieKeys = await this.keys.cookieKeys();
    await this.reload();
    this.timer = setInterval(() => {
      this.reload().catch((err: unknown) => this.logger.error({ msg: 'signing key reload failed', err: String(err) }));
    }, this.config.SIGNING_KEY_RELOAD_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The current provider (rebuilt after a key change). */
  current(): Provider {
    if (!this.provider) throw new Error('the OIDC provider is not started');
    return this.provider;
  }

  /** Express handler for everything under `/oidc`. */
  handler(): (req: Request, res: Response) => void {
    return (req, res) => {
      void this.current().callback()(req, res);
    };
  }

  /** Re-reads the keys; rebuilds the provider when the set or the signing key changed. */
  async reload(): Promise<void> {
    const jwks = await this.keys.providerKeys();
    const ids = jwks.map((k) => k.kid).join(',');
    if (ids === this.keyIds && this.provider) return;
    this.provider = this.build(jwks);
    this.keyIds = ids;
    this.logger.log({ msg: 'OIDC provider ready', signingKid: jwks[0]?.kid, publishedKeys: jwks.length });
  }

  private build(keys: NonNullable<Configuration['jwks']>['keys']): Provider {
    const audience = this.config.API_AUDIENCE;
    const ttl = this.config.ACCESS_TOKEN_TTL_SECONDS;
    const findClient = async (clientId: string) => {
      const account = await this.serviceAccounts.findActiveByClientId(clientId);
      if (!account) return undefined;
      return {
        client_id: account.client_id,
        client_secret: account.secret_hash,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post' as const,
        scope: account.scope,
      };
    };
    const configuration: Configuration = {
      adapter: this.payloads.adapter(findClient),
      clients: [
        {
          client_id: CLI_CLIENT_ID,
          application_type: 'native',
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
          response_types: ['code'],
          redirect_uris: [CLI_REDIRECT_URI],
        },
      ],
      clientDefaults: { id_token_signed_response_alg: SIGNING_ALG },
      jwks: { keys },
      cookies: { keys: this.cookieKeys },
      scopes: API_SCOPES,
      responseTypes: ['code'],
      claims: { openid: ['sub'], email: ['email'] },
      extraParams: ['workspace'],
      pkce: { required: () => true },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: false },
        revocation: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => audience,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource) => {
            if (resource !== audience) throw new errors.InvalidTarget();
            return {
              scope: API_SCOPES.join(' '),
              audience,
              accessTokenTTL: ttl,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: SIGNING_ALG } },
            };
          },
        },
      },
      ttl: {
        AccessToken: ttl,
        ClientCredentials: ttl,
        AuthorizationCode: 60,
        IdToken: 3600,
        Interaction: 600,
        Session: 24 * 3600,
        Grant: 24 * 3600,
      },
      findAccount: async (_ctx, sub) => {
        const user = await this.users.findById(sub);
        if (!user || user.disabled) return undefined;
        return { accountId: user.id, claims: () => ({ sub: user.id, email: user.email }) };
      },
      extraTokenClaims: (ctx, token) => this.tokenClaims(ctx, token),
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      renderError: (ctx, out) => {
        ctx.type = 'json';
        ctx.body = out;
      },
    };
    const provider = new Provider(this.config.AUTH_ISSUER, configuration);
    provider.proxy = true;
    // Client secrets are stored as SHA-256: compare the presented secret by its hash.
    provider.Client.prototype.compareClientSecret = function compare(this: { clientSecret: string }, actual: string) {
      return secretMatches(this.clientSecret, actual);
    };
    return provider;
  }

  /** `workspace`, `isServiceAccount` and `groups` for every access token. */
  private async tokenClaims(
    _ctx: KoaContextWithOIDC,
    token: {
      kind: string;
      clientId?: string | undefined;
      accountId?: string | undefined;
      grantId?: string | undefined;
    },
  ): Promise<Record<string, unknown> | undefined> {
    if (token.kind === 'ClientCredentials' && token.clientId) {
      const account = await this.serviceAccounts.findActiveByClientId(token.clientId);
      if (!account) return undefined;
      // The authenticated client's own workspace: its claims are read within it.
      const scope = issueWorkspaceScope(account.workspace_slug);
      const groups = await this.permissions.groupNames(scope, 'service_account', account.client_id);
      return { workspace: account.workspace_slug, isServiceAccount: 'true', groups };
    }
    if (token.accountId) {
      const workspace = token.grantId ? await this.loginWorkspaces.workspaceOf(token.grantId) : undefined;
      // The workspace the user chose at login (a member of it, checked then).
      const groups = workspace
        ? await this.permissions.groupNames(issueWorkspaceScope(workspace), 'user', token.accountId)
        : [];
      return { ...(workspace ? { workspace } : {}), isServiceAccount: 'false', groups };
    }
    return undefined;
  }
}
