import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { functionPrincipalClientId, functionPrincipalSecret, parseFunctionPrincipalKey } from '@strata/crypto';
import { DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY } from '@strata/platform';
import { clientCredentialsToken, loginWithPassword } from '@strata/sdk';
import { ManualClock } from '@strata/testing';
import { UsersService } from '../src/users/users.service.js';
import { ADMIN, AuthInstances, call, type AuthInstance } from './support/auth-instances.js';

/**
 * Workspace creation within a per-user quota (here 2), through HTTP against two
 * auth instances sharing one database; and the creator the services read at
 * `GET /internal/workspaces/{workspace}`.
 */
let instances: AuthInstances;
let a: AuthInstance;
let b: AuthInstance;
const people: Record<string, { id: string; email: string; password: string; token: string }> = {};

const create = (on: AuthInstance, token: string, slug: string) =>
  call('POST', `${on.url}/workspace/api/v1/workspaces`, { token, body: { slug, name: slug } });

beforeAll(async () => {
  instances = await AuthInstances.create({ WORKSPACE_QUOTA_PER_USER: '2' }, new ManualClock());
  a = await instances.start();
  b = await instances.start();
  for (const name of ['erin', 'frank']) {
    const email = `${name}@example.test`;
    const password = `${name}-password-1`;
    const user = await a.app.get(UsersService).create(email, password);
    const { accessToken } = await loginWithPassword({ authUrl: a.url, email, password });
    people[name] = { id: user.id, email, password, token: accessToken };
  }
});

afterAll(async () => {
  await instances?.stop();
});

describe('workspace quota', () => {
  it("refuses a user's workspace past the quota with 403 PLAN_RESTRICTED, and not another user's", async () => {
    const erin = people['erin']!;
    expect((await create(a, erin.token, 'erin-one')).status).toBe(201);
    expect((await create(b, erin.token, 'erin-two')).status).toBe(201);
    const refused = await create(a, erin.token, 'erin-three');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: 'Forbidden',
      message:
        'Workspace quota exceeded: a user may create at most 2 workspaces and you have created 2. ' +
        'Ask a platform administrator for a workspace or a higher quota.',
      code: 'PLAN_RESTRICTED',
      requestId: expect.any(String),
    });
    // The replica counts the same rows.
    expect((await create(b, erin.token, 'erin-three')).status).toBe(403);
    const mine = await call('GET', `${a.url}/workspace/api/v1/workspaces`, { token: erin.token });
    expect((mine.body['data'] as { slug: string }[]).map((w) => w.slug)).toEqual(['erin-one', 'erin-two']);

    const frank = people['frank']!;
    expect((await create(a, frank.token, 'frank-one')).status).toBe(201);
  });

  it("counts a user's concurrent creations one after another, across replicas", async () => {
    const frank = people['frank']!;
    // One left of frank's two: of four at once, one is created.
    const answers = await Promise.all(
      ['w', 'x', 'y', 'z'].map((s, i) => create(i % 2 ? a : b, frank.token, `frank-${s}`)),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 403, 403, 403]);
  });

  it('gives a platform administrator no quota', async () => {
    const admin = await loginWithPassword({ authUrl: a.url, ...ADMIN });
    for (const slug of ['ops-one', 'ops-two', 'ops-three']) {
      expect((await create(a, admin.accessToken, slug)).status).toBe(201);
    }
  });
});

describe('workspace facts for the services', () => {
  const key = parseFunctionPrincipalKey(DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY);
  const principalToken = async (workspace: string) => {
    const clientId = functionPrincipalClientId(workspace);
    return (await clientCredentialsToken(a.url, clientId, functionPrincipalSecret(key, clientId))).access_token;
  };

  it("names the workspace's creator to a credential of that workspace, as the compute service asks", async () => {
    const erin = people['erin']!;
    const facts = await call('GET', `${b.url}/internal/workspaces/erin-one`, {
      token: await principalToken('erin-one'),
    });
    expect(facts.status).toBe(200);
    expect(facts.body).toEqual({
      slug: 'erin-one',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      createdBy: { type: 'user', id: erin.id, platformAdmin: false },
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const scoped = await loginWithPassword({
      authUrl: a.url,
      email: erin.email,
      password: erin.password,
      workspace: 'erin-one',
    });
    expect((await call('GET', `${a.url}/internal/workspaces/erin-one`, { token: scoped.accessToken })).body).toEqual(
      facts.body,
    );
  });

  it('refuses another workspace, no credential and a publishable key', async () => {
    const other = await call('GET', `${a.url}/internal/workspaces/erin-two`, {
      token: await principalToken('erin-one'),
    });
    expect(other).toMatchObject({ status: 403, body: { code: 'WORKSPACE_MISMATCH' } });
    expect((await call('GET', `${a.url}/internal/workspaces/erin-one`)).status).toBe(401);

    const erin = people['erin']!;
    const scoped = await loginWithPassword({
      authUrl: a.url,
      email: erin.email,
      password: erin.password,
      workspace: 'erin-one',
    });
    const created = await call('POST', `${a.url}/workspace/erin-one/api/v1/publishable-keys`, {
      token: scoped.accessToken,
      body: { name: 'site', permissions: ['records:list'] },
    });
    expect(created.status).toBe(201);
    const res = await fetch(`${a.url}/internal/workspaces/erin-one`, {
      headers: { 'x-publishable-key': created.body['key'] as string },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ message: 'A publishable key cannot call this endpoint' });
  });
});
