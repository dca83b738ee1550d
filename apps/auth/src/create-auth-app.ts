import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { createServiceApp, setRouteTemplate, type Clock } from '@strata/platform';
import { migrateService } from '@strata/db';
import { AuthAppModule } from './app.module.js';
import { AuthConfig } from './auth.config.js';
import { IAM_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { refuseMalformedOAuthUrl, tokenFormParser } from './oidc/oauth-input.js';
import { OidcService } from './oidc/oidc.service.js';
import { UsersService } from './users/users.service.js';
import { FunctionPrincipalsService } from './function-principals/function-principals.service.js';
import { serviceAccountDeprecatedRoutes } from './service-accounts/deprecated-routes.js';
import { ServiceAccountsService } from './service-accounts/service-accounts.service.js';
import { parseTrustedProxies } from './sign-in-throttle/client-address.js';
import { SignInThrottle } from './sign-in-throttle/sign-in-throttle.service.js';
import { tokenThrottle } from './sign-in-throttle/token-throttle.js';

/** Runs the iam schema's migrations (the start script and the Helm hook call this, not every replica). */
export function migrateAuth(config: AuthConfig): Promise<string[]> {
  return migrateService({ url: config.DATABASE_URL, schema: IAM_SCHEMA, entities: [], migrations: MIGRATIONS });
}

/** Builds the auth service: Nest routes plus the OIDC provider mounted at `/oidc`. Does not listen. */
export async function createAuthApp(
  config: AuthConfig,
  options: { readonly clock?: Clock } = {},
): Promise<NestExpressApplication> {
  const app = await createServiceApp(AuthAppModule.forRoot(config, options.clock), {
    name: 'auth',
    config,
    description: 'Identity: OIDC tokens, workspaces, service accounts, groups and policies, publishable keys',
    // oidc-provider parses and checks its own input (see oauth-input.ts).
    skipBodyParsing: /^\/oidc(\/|$)/,
    // The login page's form; every other body is JSON.
    formPaths: /^\/interaction\/[^/]+\/login$/,
    deprecatedRoutes: serviceAccountDeprecatedRoutes(config.AUTH_ISSUER),
    beforeInit: async (nest) => {
      // `req.ip` (the sign-in limits' client address) believes X-Forwarded-For only through these.
      nest.set('trust proxy', parseTrustedProxies(config.AUTH_TRUSTED_PROXIES));
      const oidc = nest.get(OidcService);
      await oidc.start();
      await nest.get(UsersService).ensureAdmin(config.STRATA_ADMIN_EMAIL, config.STRATA_ADMIN_PASSWORD);
      await nest.get(FunctionPrincipalsService).ensureAll();
      // Named for the request metrics: Express has no route template for a mounted handler.
      nest.use('/oidc', (req: Request, _res: Response, next: NextFunction) => {
        setRouteTemplate(req, '/oidc');
        next();
      });
      nest.use('/oidc', refuseMalformedOAuthUrl);
      // The spec's token response always states a scope: default client-credentials requests to `openid`.
      nest.use(
        '/oidc/token',
        ...tokenFormParser(),
        defaultClientCredentialsScope,
        tokenThrottle(nest.get(SignInThrottle), nest.get(ServiceAccountsService)),
      );
      nest.use('/oidc', oidc.handler());
    },
  });
  return app;
}

function defaultClientCredentialsScope(req: Request, _res: Response, next: NextFunction): void {
  const body = req.body as Record<string, unknown> | undefined;
  if (body && body['grant_type'] === 'client_credentials' && !body['scope']) body['scope'] = 'openid';
  next();
}
