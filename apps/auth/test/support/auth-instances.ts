import { createHash, randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { loadConfig, type Clock } from '@strata/platform';
import { createTestDatabase, freePort, testNatsPrefix, type TestDatabase } from '@strata/testing';
import { AuthConfig } from '../../src/auth.config.js';
import { createAuthApp, migrateAuth } from '../../src/create-auth-app.js';

/** A JSON body as the tests read it. */
export type Json = Record<string, unknown>;

export const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

/** One running auth service. */
export interface AuthInstance {
  readonly url: string;
  readonly app: INestApplication;
}

/**
 * Auth services on one test database and NATS prefix of their own: the first
 * migrates, each further one is a replica sharing the database, all on `clock`.
 */
export class AuthInstances {
  private readonly running: INestApplication[] = [];

  private constructor(
    private readonly db: TestDatabase,
    private readonly env: Record<string, string | undefined>,
    private readonly clock: Clock,
  ) {}

  static async create(settings: Record<string, string>, clock: Clock): Promise<AuthInstances> {
    const db = await createTestDatabase('strata_auth_test');
    const env = {
      ...process.env,
      STRATA_ENV: 'development',
      DATABASE_URL: db.url,
      NATS_PREFIX: testNatsPrefix(),
      STRATA_ADMIN_EMAIL: ADMIN.email,
      STRATA_ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'warn',
      ...settings,
    };
    await migrateAuth(loadConfig(AuthConfig, env));
    return new AuthInstances(db, env, clock);
  }

  /** Starts one more instance, with `overrides` on top of the file's settings. */
  async start(overrides: Record<string, string> = {}): Promise<AuthInstance> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const config = loadConfig(AuthConfig, {
      ...this.env,
      AUTH_PORT: String(port),
      // Every instance issues as the same service would behind one host name.
      AUTH_ISSUER: this.env['AUTH_ISSUER'] ?? `${url}/oidc`,
      AUTH_INTERNAL_URL: url,
      ...overrides,
    });
    this.env['AUTH_ISSUER'] ??= `${url}/oidc`;
    const app = await createAuthApp(config, { clock: this.clock });
    await app.listen(port, '127.0.0.1');
    this.running.push(app);
    return { url, app };
  }

  async stop(): Promise<void> {
    for (const app of this.running.splice(0)) await app.close();
    await this.db.drop();
  }
}

/** A minimal cookie jar: the login flow needs name=value pairs on one host. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      if (eq > 0) this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * What a browser (or `strata login`) does up to the login form: starts an
 * authorization request, opens the interaction, and posts the form with
 * `headers` (X-Forwarded-For standing for the proxy in front, Accept). Answers
 * the form's response as it is: a 303 on to the provider when the login
 * succeeded, the login page with an error, or a refusal.
 */
export async function submitLogin(
  authUrl: string,
  form: { email: string; password: string },
  headers: Record<string, string> = {},
): Promise<Response> {
  const jar = new CookieJar();
  const step = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(new URL(url, authUrl), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
    });
    jar.store(res);
    return res;
  };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${authUrl}/oidc/auth`);
  authorize.search = new URLSearchParams({
    client_id: 'strata-cli',
    response_type: 'code',
    redirect_uri: 'http://127.0.0.1/callback',
    scope: 'openid',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
  }).toString();
  const started = await step(authorize.toString());
  const interaction = started.headers.get('location');
  if (!interaction) throw new Error(`no interaction: ${started.status} ${await started.text()}`);
  await (await step(interaction)).text();
  return step(`${interaction}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ email: form.email, password: form.password, workspace: '' }).toString(),
  });
}

/** A client-credentials token request with `headers` on top. */
export async function requestToken(
  authUrl: string,
  clientId: string,
  clientSecret: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(`${authUrl}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

/** JSON request helper: status, headers and parsed body. */
export async function call(
  method: string,
  url: string,
  options: { token?: string; body?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Json };
}
