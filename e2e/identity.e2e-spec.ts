import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { loginWithPassword } from '@strata/sdk';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
let userToken: string;
const ws = `acme-${Date.now().toString(36)}`;

beforeAll(async () => {
  stack = await startStack();
  userToken = await adminWorkspaceToken(stack, ws);
});

afterAll(async () => {
  await stack?.stop();
});

const sa = (path = '') => `${stack.authUrl}/workspace/${ws}/api/v1/service-accounts${path}`;

async function createServiceAccount(name: string, scope?: string) {
  const res = await call('POST', sa(), { token: userToken, body: { name, ...(scope ? { scope } : {}) } });
  expect(res.status).toBe(201);
  return res.body as { id: number; clientId: string; clientSecret: string };
}

async function ccToken(clientId: string, clientSecret: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.authUrl}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  return { status: res.status, body: await res.json() };
}

describe('tokens', () => {
  it('issues a client-credentials token through discovery that verifies against the JWKS', async () => {
    const account = await createServiceAccount('discovery-client');
    const config = await oidc.discovery(
      new URL(stack.issuer),
      account.clientId,
      undefined,
      oidc.ClientSecretPost(account.clientSecret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    // The spec's value exactly, as the token endpoint sends it (the client above normalises case).
    const raw = await ccToken(account.clientId, account.clientSecret);
    expect(raw.body.token_type).toBe('Bearer');
    expect(tokens.expires_in).toBe(25200);
    expect(tokens.scope).toBe('openid');
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
    const { payload } = await jwtVerify(tokens.access_token, jwks, {
      issuer: stack.issuer,
      audience: 'urn:strata:api',
    });
    expect(payload).toMatchObject({ sub: account.clientId, workspace: ws, isServiceAccount: 'true', groups: [] });
    expect(typeof payload.iat).toBe('number');
    expect(payload.exp! - payload.iat!).toBe(25200);
  });

  it('answers 401 for a wrong secret and 400 for a malformed request', async () => {
    const account = await createServiceAccount('wrong-secret');
    const wrong = await ccToken(account.clientId, `sk_${'0'.repeat(64)}`);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const unknown = await ccToken('ci_000000000000000000000000', 'sk_x');
    expect(unknown.status).toBe(401);
    const noGrant = await fetch(`${stack.authUrl}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: account.clientId,
        client_secret: account.clientSecret,
        grant_type: 'password',
      }),
    });
    expect(noGrant.status).toBe(400);
    expect(noGrant.headers.get('content-type')).toMatch(/json/);
  });

  it('refuses malformed token requests with an OAuth error body, never a 500', async () => {
    const account = await createServiceAccount('malformed-bodies');
    const post = (body: string, contentType = 'application/x-www-form-urlencoded') =>
      call('POST', `${stack.authUrl}/oidc/token`, { body, headers: { 'content-type': contentType } });
    const cases = [
      { name: 'empty body', res: await post('') },
      { name: 'no grant_type', res: await post(`client_id=${account.clientId}&client_secret=${account.clientSecret}`) },
      {
        name: 'JSON instead of a form',
        res: await post(
          JSON.stringify({ grant_type: 'client_credentials', client_id: account.clientId }),
          'application/json',
        ),
      },
      { name: 'garbage', res: await post('%%%&&&===', 'application/x-www-form-urlencoded') },
      {
        name: 'unknown grant',
        res: await post(`grant_type=urn:nope&client_id=${account.clientId}&client_secret=${account.clientSecret}`),
      },
    ];
    for (const { name, res } of cases) {
      expect({ name, status: res.status < 500 && res.status >= 400 }).toEqual({ name, status: true });
      expect({ name, error: typeof res.body?.error }).toEqual({ name, error: 'string' });
    }
    // A token request sent to {base_url} fails, as the spec says.
    const viaGateway = await call('POST', `${stack.baseUrl}/oidc/token`, {
      body: `grant_type=client_credentials&client_id=${account.clientId}&client_secret=${account.clientSecret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(viaGateway.status).toBe(404);
  });

  it('gives user tokens the user id and the workspace chosen at login', async () => {
    const { payload } = await jwtVerify(userToken, createRemoteJWKSet(new URL(`${stack.issuer}/jwks`)), {
      issuer: stack.issuer,
    });
    expect(payload).toMatchObject({ workspace: ws, isServiceAccount: 'false', groups: ['workspace_administrators'] });
    expect(payload.sub).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers an unknown login interaction with 400', async () => {
    expect((await call('GET', `${stack.authUrl}/interaction/unknown-uid`)).status).toBe(400);
    const post = await call('POST', `${stack.authUrl}/interaction/unknown-uid/login`, {
      body: { email: 'a@b.c', password: 'x' },
    });
    expect(post.status).toBe(400);
  });

  it('refuses a login with a wrong password or a workspace the user is not in', async () => {
    await expect(
      loginWithPassword({ authUrl: stack.authUrl, email: stack.adminEmail, password: 'nope-nope' }),
    ).rejects.toThrow(/Wrong email or password/);
    await expect(
      loginWithPassword({
        authUrl: stack.authUrl,
        email: stack.adminEmail,
        password: stack.adminPassword,
        workspace: 'elsewhere',
      }),
    ).rejects.toThrow(/not a member/);
  });
});

describe('the strata CLI', () => {
  const cli = fileURLToPath(new URL('../apps/cli/dist/main.js', import.meta.url));
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        process.execPath,
        [cli, ...args],
        { env: { ...process.env, STRATA_AUTH_URL: stack.authUrl }, timeout: 30_000 },
        (err, stdout, stderr) => {
          if (err && typeof err.code !== 'number') reject(new Error(err.message));
          else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
        },
      );
    });

  it('logs in and prints a token for the chosen workspace', async () => {
    const ok = await run(['login', '--email', stack.adminEmail, '--password', stack.adminPassword, '--workspace', ws]);
    expect(ok.code).toBe(0);
    const token = ok.stdout.trim();
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${stack.issuer}/jwks`)), {
      issuer: stack.issuer,
    });
    expect(payload).toMatchObject({ workspace: ws, isServiceAccount: 'false' });
    const listed = await call('GET', sa(), { token });
    expect(listed.status).toBe(200);
  });

  it('exits 1 with a message on a wrong password and 2 with the usage on bad arguments', async () => {
    const wrong = await run(['login', '--email', stack.adminEmail, '--password', 'not-it']);
    expect(wrong).toMatchObject({ code: 1, stdout: '' });
    expect(wrong.stderr).toMatch(/Wrong email or password/);
    const usage = await run(['login', '--email', stack.adminEmail]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--email and --password are required/);
    expect((await run(['frobnicate'])).code).toBe(2);
  });
});

describe('service accounts', () => {
  it('runs the whole lifecycle: get, list, rename, describe, rotate, revoke, delete', async () => {
    const account = await createServiceAccount('lifecycle');
    expect(account.clientId).toMatch(/^ci_[0-9a-f]{24}$/);
    expect(account.clientSecret).toMatch(/^sk_[0-9a-f]{64}$/);

    const got = await call('GET', sa(`/${account.id}`), { token: userToken });
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('clientSecret');
    expect(got.body).toMatchObject({
      id: account.id,
      name: 'lifecycle',
      workspace: ws,
      scope: 'openid',
      grant_types: ['client_credentials'],
    });

    const list = await call('GET', sa('?page=1&limit=100'), { token: userToken });
    expect(list.status).toBe(200);
    expect(list.body.data.some((a: { id: number }) => a.id === account.id)).toBe(true);
    expect(list.body.data.every((a: object) => !('clientSecret' in a))).toBe(true);

    const renamed = await call('PUT', sa(`/${account.id}/name`), { token: userToken, body: { name: 'renamed' } });
    expect(renamed.body).toMatchObject({ name: 'renamed' });
    expect(
      (await call('PUT', sa(`/${account.id}/description`), { token: userToken, body: { description: 'd' } })).body
        .description,
    ).toBe('d');

    expect((await ccToken(account.clientId, account.clientSecret)).status).toBe(200);
    const rotated = await call('POST', sa(`/${account.id}/rotate`), { token: userToken });
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body).sort()).toEqual([
      'clientId',
      'clientSecret',
      'id',
      'name',
      'updatedAt',
      'workspace',
    ]);
    expect((await ccToken(account.clientId, account.clientSecret)).status).toBe(401);
    const fresh = await ccToken(account.clientId, rotated.body.clientSecret);
    expect(fresh.status).toBe(200);

    const revoked = await call('POST', sa(`/${account.id}/revoke`), { token: userToken });
    expect(revoked.body.status).toBe('revoked');
    expect((await ccToken(account.clientId, rotated.body.clientSecret)).status).toBe(401);
    // The token it already holds is refused within the permission cache time.
    await eventually(async () => {
      const r = await call('GET', `${stack.authUrl}/workspace/${ws}/api/v1/permissions/me`, {
        token: fresh.body.access_token,
      });
      return r.status === 401 ? true : undefined;
    }, 5000);

    expect((await call('DELETE', sa(`/${account.id}`), { token: userToken })).status).toBe(204);
    expect((await call('GET', sa(`/${account.id}`), { token: userToken })).status).toBe(404);
  });

  it('validates bodies and ids with one detail per field', async () => {
    const bad = await call('POST', sa(), {
      token: userToken,
      body: { name: '', grant_types: ['password'], scope: 'admin', extra: 1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect(bad.body.requestId).toEqual(expect.any(String));
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'extra',
      'grant_types',
      'name',
      'scope',
    ]);
    const notJson = await call('POST', sa(), {
      token: userToken,
      body: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect((await call('GET', sa('/abc'), { token: userToken })).status).toBe(400);
    expect((await call('GET', sa('/999999'), { token: userToken })).status).toBe(404);
    await createServiceAccount('dupe');
    const dupe = await call('POST', sa(), { token: userToken, body: { name: 'dupe' } });
    expect(dupe.status).toBe(409);
  });

  it('refuses service-account tokens, other workspaces and missing tokens', async () => {
    const account = await createServiceAccount('machine');
    const token = (await ccToken(account.clientId, account.clientSecret)).body.access_token as string;
    const asMachine = await call('GET', sa(), { token });
    expect(asMachine.status).toBe(403);
    expect(asMachine.body.message).toMatch(/user token/);
    const other = await call('GET', `${stack.authUrl}/workspace/other-ws/api/v1/service-accounts`, {
      token: userToken,
    });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('WORKSPACE_MISMATCH');
    const none = await call('GET', sa());
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const garbage = await call('GET', sa(), { token: 'not-a-jwt' });
    expect(garbage.status).toBe(401);
  });
});

describe('groups and policies', () => {
  it('grants through policies, refuses unknown actions, and applies changes within seconds', async () => {
    const groups = `${stack.authUrl}/workspace/${ws}/api/v1/groups`;
    const group = await call('POST', groups, { token: userToken, body: { name: 'readers' } });
    expect(group.status).toBe(201);

    const unknown = await call('POST', `${groups}/${group.body.id}/policies`, {
      token: userToken,
      body: { resource: 'groups', actions: ['fly', 'list'] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([
      { field: 'actions[0]', message: expect.stringContaining('valid actions: create, retrieve, list') },
    ]);
    const badResource = await call('POST', `${groups}/${group.body.id}/policies`, {
      token: userToken,
      body: { resource: 'everything', actions: ['list'] },
    });
    expect(badResource.status).toBe(400);

    // The spec: `read` is not valid and silently grants nothing. Accepted, with a warning.
    const policy = await call('POST', `${groups}/${group.body.id}/policies`, {
      token: userToken,
      body: { resource: 'groups', actions: ['read', 'list'] },
    });
    expect(policy.status).toBe(201);
    expect(policy.body.actions).toEqual(['read', 'list']);
    expect(policy.body.warnings).toEqual([
      { field: 'actions[0]', message: expect.stringContaining("'read' is not an action and grants nothing") },
    ]);
    const shown = await call('GET', `${groups}/${group.body.id}`, { token: userToken });
    expect(shown.body.policies[0].warnings).toHaveLength(1);
    const account = await createServiceAccount('reader');
    const member = await call('POST', `${groups}/${group.body.id}/members`, {
      token: userToken,
      body: { type: 'service_account', id: account.clientId },
    });
    expect(member.status).toBe(201);

    const token = (await ccToken(account.clientId, account.clientSecret)).body.access_token as string;
    expect((await call('GET', groups, { token })).status).toBe(200);
    const me = await call('GET', `${stack.authUrl}/workspace/${ws}/api/v1/permissions/me`, { token });
    expect(me.body.permissions).toEqual(['groups:list']);
    expect((await call('GET', `${groups}/${group.body.id}`, { token })).status).toBe(403);
    const forbidden = await call('POST', groups, { token, body: { name: 'nope' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.message).toBe('Missing permission: groups:create');

    expect(
      (await call('DELETE', `${groups}/${group.body.id}/policies/${policy.body.id}`, { token: userToken })).status,
    ).toBe(204);
    await eventually(async () => ((await call('GET', groups, { token })).status === 403 ? true : undefined), 5000);

    const dupe = await call('POST', groups, { token: userToken, body: { name: 'readers' } });
    expect(dupe.status).toBe(409);
  });
});

describe('publishable keys', () => {
  it('creates a read-only key shown once, accepts it for its permissions, and refuses it once revoked', async () => {
    const keys = `${stack.authUrl}/workspace/${ws}/api/v1/publishable-keys`;
    const write = await call('POST', keys, {
      token: userToken,
      body: { name: 'web', permissions: ['records:create'] },
    });
    expect(write.status).toBe(400);
    const created = await call('POST', keys, {
      token: userToken,
      body: { name: 'web', permissions: ['records:list', 'records:retrieve'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^pk_live_/);
    const listed = await call('GET', keys, { token: userToken });
    expect(listed.body.data[0]).not.toHaveProperty('key');
    expect(listed.body.data[0].prefix).toBe(created.body.key.slice(0, 16));

    const me = await call('GET', `${stack.authUrl}/workspace/${ws}/api/v1/permissions/me`, {
      headers: { 'x-publishable-key': created.body.key },
    });
    expect(me.status).toBe(200);
    expect(me.body.permissions).toEqual(['records:list', 'records:retrieve']);
    const elsewhere = await call('GET', keys, { headers: { 'x-publishable-key': created.body.key } });
    expect(elsewhere.status).toBe(403);

    // On another workspace's URL the key is a credential for the wrong workspace, as a token would be.
    const otherWs = `${ws}-other`;
    await adminWorkspaceToken(stack, otherWs);
    for (const url of [
      `${stack.authUrl}/workspace/${otherWs}/api/v1/permissions/me`,
      `${stack.baseUrl}/data/workspace/${otherWs}/api/v1/records/slug/anything`,
    ]) {
      const wrong = await call('GET', url, { headers: { 'x-publishable-key': created.body.key } });
      expect([url, wrong.status, wrong.body.code ?? wrong.body.error?.code]).toEqual([url, 403, 'WORKSPACE_MISMATCH']);
    }
    // A key that is no key at all stays a 401.
    const unknownKey = await call('GET', `${stack.authUrl}/workspace/${otherWs}/api/v1/permissions/me`, {
      headers: { 'x-publishable-key': `pk_live_${'0'.repeat(43)}` },
    });
    expect(unknownKey.status).toBe(401);

    await call('POST', `${keys}/${created.body.id}/revoke`, { token: userToken });
    const after = await call('GET', `${stack.authUrl}/workspace/${ws}/api/v1/permissions/me`, {
      headers: { 'x-publishable-key': created.body.key },
    });
    expect(after.status).toBe(401);
  });
});

describe('workspaces and the gateway', () => {
  it('validates slugs, refuses a taken slug, and lists the caller’s workspaces through {base_url}', async () => {
    const url = `${stack.baseUrl}/workspace/api/v1/workspaces`;
    const bad = await call('POST', url, { token: userToken, body: { slug: 'Not_OK', name: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toBe('slug');
    expect((await call('POST', url, { token: userToken, body: { slug: ws, name: 'again' } })).status).toBe(409);
    const list = await call('GET', url, { token: userToken });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(list.body.data.map((w: { slug: string }) => w.slug)).toContain(ws);
  });

  it('answers unknown paths and token requests on {base_url} with a 404 in the general shape', async () => {
    const unknown = await call('GET', `${stack.baseUrl}/nowhere`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'Not Found', code: 'NOT_FOUND', requestId: expect.any(String) });
    expect((await call('POST', `${stack.baseUrl}/oidc/token`, { body: {} })).status).toBe(404);
  });

  it('serves the older IAM rotate path with deprecation headers', async () => {
    const account = await createServiceAccount('legacy-rotate');
    const res = await call('PUT', `${stack.baseUrl}/iam/workspace/${ws}/api/v1/service-accounts/${account.id}/rotate`, {
      token: userToken,
    });
    expect(res.body).toMatchObject({ id: account.id });
    expect(res.body.clientSecret).toMatch(/^sk_/);
    expect(res.headers.get('deprecation')).toBe('true');
    expect(res.headers.get('sunset')).toMatch(/GMT$/);
    // The successor is on {auth_url}: the same path on {base_url} is not routed.
    expect(res.headers.get('link')).toBe(
      `<${stack.authUrl}/workspace/${ws}/api/v1/service-accounts/${account.id}/rotate>; rel="successor-version"`,
    );

    // Refused by the guard (no token), on {auth_url} itself: the headers still come.
    const refused = await call('PUT', `${stack.authUrl}/workspace/${ws}/api/v1/service-accounts/${account.id}/rotate`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('deprecation')).toBe('true');
    expect(refused.headers.get('link')).toBe(
      `<${stack.authUrl}/workspace/${ws}/api/v1/service-accounts/${account.id}/rotate>; rel="successor-version"`,
    );
    // Any older IAM path: the gateway names the successor on {auth_url}.
    const listed = await call('GET', `${stack.baseUrl}/iam/workspace/${ws}/api/v1/service-accounts`, {
      token: userToken,
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('link')).toBe(
      `<${stack.authUrl}/workspace/${ws}/api/v1/service-accounts>; rel="successor-version"`,
    );
    const primary = await call('POST', `${stack.authUrl}/workspace/${ws}/api/v1/service-accounts/${account.id}/rotate`);
    expect(primary.headers.get('deprecation')).toBeNull();
  });

  it("serves the services' OpenAPI documents at {base_url}/docs", async () => {
    const page = await call('GET', `${stack.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('/docs/auth.json');
    const doc = await call('GET', `${stack.baseUrl}/docs/auth.json`);
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toContain('/workspace/{workspace}/api/v1/service-accounts/{id}/rotate');
    // Swagger UI, served from the gateway itself.
    expect(page.body).toContain('SwaggerUIBundle');
    const script = await fetch(`${stack.baseUrl}/docs/ui/swagger-ui-bundle.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    // A service that is not running has no document.
    await stack.stopWebhooks();
    try {
      const missing = await call('GET', `${stack.baseUrl}/docs/webhooks.json`);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ error: 'Not Found', code: 'NOT_FOUND' });
    } finally {
      await stack.restartWebhooks();
    }
  });

  it('reports health and readiness', async () => {
    expect((await call('GET', `${stack.authUrl}/healthz`)).status).toBe(200);
    const ready = await call('GET', `${stack.authUrl}/readyz`);
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'ok', nats: 'ok' } });
  });
});
