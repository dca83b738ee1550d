import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { rotateSigningKey } from '@strata/auth';
import { clientCredentialsToken } from '@strata/sdk';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const ws = `keys-${Date.now().toString(36)}`;
let userToken: string;
let account: { clientId: string; clientSecret: string };

beforeAll(async () => {
  stack = await startStack({
    SIGNING_KEY_RELOAD_MS: '200',
    SIGNING_KEY_ACTIVATION_DELAY_MS: '1500',
    JWKS_REFRESH_COOLDOWN_MS: '0',
  });
  userToken = await adminWorkspaceToken(stack, ws);
  const created = await call('POST', `${stack.authUrl}/workspace/${ws}/api/v1/service-accounts`, {
    token: userToken,
    body: { name: 'rotation-client' },
  });
  expect(created.status).toBe(201);
  account = created.body;
});

afterAll(async () => {
  await stack?.stop();
});

const token = () =>
  clientCredentialsToken(stack.authUrl, account.clientId, account.clientSecret).then((t) => t.access_token);
const me = (bearer: string) => call('GET', `${stack.authUrl}/workspace/${ws}/api/v1/permissions/me`, { token: bearer });
const published = async () =>
  ((await call('GET', `${stack.authUrl}/oidc/jwks`)).body.keys as { kid: string }[]).map((k) => k.kid);

describe('signing keys', () => {
  it('survive a restart: the same key keeps signing and earlier tokens stay valid', async () => {
    const before = await token();
    const kids = await published();
    await stack.restartAuth();
    expect(await published()).toEqual(kids);
    expect(decodeProtectedHeader(await token()).kid).toBe(decodeProtectedHeader(before).kid);
    expect((await me(before)).status).toBe(200);
  });

  it('rotate: the new key is published before it signs and keeps accepting tokens signed with the old one', async () => {
    const before = await token();
    const oldKid = decodeProtectedHeader(before).kid!;
    expect(await published()).toEqual([oldKid]);
    expect((await me(before)).status).toBe(200);

    await rotateSigningKey(stack.authConfig);

    // Published at once (next reload), signing only after the activation delay.
    const kids = await eventually(async () => {
      const list = await published();
      return list.length === 2 ? list : undefined;
    }, 5000);
    expect(kids).toContain(oldKid);
    const newKid = kids.find((k) => k !== oldKid)!;

    const after = await eventually(async () => {
      const t = await token();
      return decodeProtectedHeader(t).kid === newKid ? t : undefined;
    }, 10_000);

    // Both tokens verify: against the JWKS with a standard JOSE library, and at a protected endpoint.
    const jwks = createRemoteJWKSet(new URL(`${stack.authUrl}/oidc/jwks`));
    for (const t of [before, after]) {
      await expect(jwtVerify(t, jwks, { issuer: stack.issuer, audience: 'urn:strata:api' })).resolves.toBeDefined();
      expect((await me(t)).status).toBe(200);
    }
    expect((await me(userToken)).status).toBe(200);
  });
});
