import 'reflect-metadata';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { loginWithPassword } from '@strata/sdk';
import { ManualClock } from '@strata/testing';
import { UsersService } from '../src/users/users.service.js';
import { SignInThrottle } from '../src/sign-in-throttle/sign-in-throttle.service.js';
import { collectCounters } from './support/metrics.js';
import { ADMIN, AuthInstances, call, requestToken, submitLogin, type AuthInstance } from './support/auth-instances.js';

/**
 * Password guessing at the login form (what `strata login` posts) and secret
 * guessing at the token endpoint, through HTTP, against two auth instances
 * sharing one database (replicas) and a manual clock: past the free failures
 * each attempt waits, doubling, and a refused attempt runs no scrypt.
 * Addresses are given as the proxy in front would, in X-Forwarded-For from
 * loopback (trusted by default); the last test checks that a hop that is not
 * trusted cannot choose its address that way.
 */
const counters = collectCounters();
const clock = new ManualClock(Date.parse('2026-12-01T09:00:00.000Z'));
let instances: AuthInstances;
let a: AuthInstance;
let b: AuthInstance;

const SETTINGS = {
  LOGIN_FAILURES_PER_ACCOUNT: '3',
  LOGIN_FAILURES_PER_ADDRESS: '5',
  LOGIN_DELAY_BASE_MS: '1000',
  LOGIN_DELAY_MAX_MS: '8000',
  LOGIN_FAILURE_MEMORY_MS: '60000',
};

const from = (address: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': address, ...extra });
const scryptRuns = () => counters.counted('strata.auth.password_checks');

beforeAll(async () => {
  instances = await AuthInstances.create(SETTINGS, clock);
  a = await instances.start();
  b = await instances.start();
  const users = a.app.get(UsersService);
  for (const name of ['ada', 'bob', 'carol']) await users.create(`${name}@example.test`, `${name}-password-1`);
});

afterAll(async () => {
  await instances?.stop();
  await counters.stop();
});

describe('password login', () => {
  it('answers 429 with Retry-After past the free failures of an account, with no scrypt while refused, and lets the right password in after the wait', async () => {
    const ada = { email: 'ada@example.test', password: 'ada-password-1' };
    const wrong = { ...ada, password: 'guess' };
    const before = await scryptRuns();
    for (let i = 0; i < 3; i++) expect((await submitLogin(a.url, wrong, from('198.51.100.1'))).status).toBe(401);
    expect(await scryptRuns()).toBe(before + 3);

    const refused = await submitLogin(a.url, wrong, from('198.51.100.1', { accept: 'application/json' }));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({
      error: 'Too Many Requests',
      message: 'Too many failed sign-ins for this account. Try again in 1 second.',
      code: 'RATE_LIMITED',
      requestId: expect.any(String),
    });
    // The right password is refused too while the account waits (a browser gets the page), from any address.
    const right = await submitLogin(a.url, ada, from('198.51.100.99'));
    expect(right.status).toBe(429);
    expect(right.headers.get('retry-after')).toBe('1');
    expect(await right.text()).toContain('Too many failed sign-ins for this account. Try again in 1 second.');
    expect(await scryptRuns()).toBe(before + 3);
    expect(await counters.counted('strata.auth.sign_in_refusals', { endpoint: 'login', limit: 'account' })).toBe(2);
    expect(await counters.counted('strata.auth.password_checks', { outcome: 'match' })).toBe(0);

    // The wait is over: one more guess is checked, and the next wait is twice as long.
    clock.advance(1000);
    expect((await submitLogin(a.url, wrong, from('198.51.100.1'))).status).toBe(401);
    const longer = await submitLogin(a.url, ada, from('198.51.100.1'));
    expect(longer.status).toBe(429);
    expect(longer.headers.get('retry-after')).toBe('2');
    expect(await scryptRuns()).toBe(before + 4);

    clock.advance(2000);
    const signedIn = await submitLogin(a.url, ada, from('198.51.100.1'));
    expect(signedIn.status).toBe(303);
    expect(await scryptRuns()).toBe(before + 5);
    // The success started the account afresh: three free failures again (from an address with its own).
    for (let i = 0; i < 3; i++) expect((await submitLogin(a.url, wrong, from('198.51.100.11'))).status).toBe(401);
    const again = await submitLogin(a.url, wrong, from('198.51.100.11', { accept: 'application/json' }));
    expect(again.status).toBe(429);
    expect(((await again.json()) as { message: string }).message).toMatch(/for this account/);
  });

  it('holds across replicas: what one instance counted, the other refuses', async () => {
    const bob = { email: 'bob@example.test', password: 'bob-password-1' };
    for (let i = 0; i < 3; i++) {
      const on = i % 2 === 0 ? a : b;
      expect((await submitLogin(on.url, { ...bob, password: `guess-${i}` }, from('198.51.100.2'))).status).toBe(401);
    }
    const before = await scryptRuns();
    const onB = await submitLogin(b.url, bob, from('198.51.100.2'));
    expect(onB.status).toBe(429);
    expect(onB.headers.get('retry-after')).toBe('1');
    expect((await submitLogin(a.url, bob, from('198.51.100.2'))).status).toBe(429);
    expect(await scryptRuns()).toBe(before);
    clock.advance(1000);
    expect((await submitLogin(b.url, bob, from('198.51.100.2'))).status).toBe(303);
  });

  it('limits guesses spread over many accounts from one address, and not other addresses', async () => {
    for (let i = 0; i < 5; i++) {
      const guess = { email: `nobody-${i}@example.test`, password: 'guess' };
      expect((await submitLogin(i % 2 ? a.url : b.url, guess, from('198.51.100.3'))).status).toBe(401);
    }
    const before = await scryptRuns();
    const refusals = await counters.counted('strata.auth.sign_in_refusals', { endpoint: 'login', limit: 'address' });
    const sprayed = await submitLogin(
      a.url,
      { email: 'nobody-5@example.test', password: 'guess' },
      {
        'x-forwarded-for': '198.51.100.3',
        accept: 'application/json',
      },
    );
    expect(sprayed.status).toBe(429);
    expect(sprayed.headers.get('retry-after')).toBe('1');
    expect(((await sprayed.json()) as { message: string }).message).toBe(
      'Too many failed sign-ins for this address. Try again in 1 second.',
    );
    const carol = { email: 'carol@example.test', password: 'carol-password-1' };
    expect((await submitLogin(b.url, carol, from('198.51.100.3'))).status).toBe(429);
    expect(await scryptRuns()).toBe(before);
    expect(await counters.counted('strata.auth.sign_in_refusals', { endpoint: 'login', limit: 'address' })).toBe(
      refusals + 2,
    );
    // Another address is not held back, and carol's account was not charged by the refusals.
    expect(
      (await submitLogin(a.url, { email: 'nobody-5@example.test', password: 'guess' }, from('198.51.100.4'))).status,
    ).toBe(401);
    expect((await submitLogin(a.url, carol, from('198.51.100.4'))).status).toBe(303);
  });

  it('does not spend an address on logins that succeed', async () => {
    const carol = { email: 'carol@example.test', password: 'carol-password-1' };
    for (let i = 0; i < 7; i++) expect((await submitLogin(b.url, carol, from('198.51.100.5'))).status).toBe(303);
  });

  it('is what `strata login` meets: the SDK reports the refusal and its wait', async () => {
    for (let i = 0; i < 3; i++) {
      await expect(
        loginWithPassword({ authUrl: a.url, email: 'dave@example.test', password: 'x' }),
      ).rejects.toMatchObject({
        status: 401,
      });
    }
    await expect(
      loginWithPassword({ authUrl: a.url, email: 'dave@example.test', password: 'x' }),
    ).rejects.toMatchObject({
      status: 429,
      message: 'Too many failed sign-ins for this account. Try again in 1 second.',
    });
  });
});

describe('client credentials', () => {
  let account: { clientId: string; clientSecret: string };
  const wrongSecret = `sk_${'0'.repeat(64)}`;

  beforeAll(async () => {
    const first = await loginWithPassword({ authUrl: a.url, ...ADMIN });
    const workspace = await call('POST', `${a.url}/workspace/api/v1/workspaces`, {
      token: first.accessToken,
      body: { slug: 'guessing', name: 'Guessing' },
    });
    expect(workspace.status).toBe(201);
    const admin = await loginWithPassword({ authUrl: a.url, ...ADMIN, workspace: 'guessing' });
    const created = await call('POST', `${a.url}/workspace/guessing/api/v1/service-accounts`, {
      token: admin.accessToken,
      body: { name: 'robot' },
    });
    expect(created.status).toBe(201);
    account = created.body as { clientId: string; clientSecret: string };
  });

  it('answers 429 with Retry-After to repeated wrong secrets, on every replica, and clears on the right one', async () => {
    for (let i = 0; i < 3; i++) {
      const wrong = await requestToken(i % 2 ? b.url : a.url, account.clientId, wrongSecret, from('198.51.100.6'));
      expect(wrong).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    }
    for (const on of [a, b]) {
      const refused = await requestToken(on.url, account.clientId, wrongSecret, from('198.51.100.7'));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body).toEqual({
        error: 'Too Many Requests',
        message: 'Too many failed client authentications for this account. Try again in 1 second.',
        code: 'RATE_LIMITED',
        requestId: expect.any(String),
      });
    }
    expect(await counters.counted('strata.auth.sign_in_refusals', { endpoint: 'token', limit: 'account' })).toBe(2);
    // Client ids are no secret (a function principal's is ci_functions_<workspace>): the right secret is
    // never held back by other callers' guesses, and it clears them.
    const right = await requestToken(b.url, account.clientId, account.clientSecret, from('198.51.100.7'));
    expect(right).toMatchObject({ status: 200, body: { token_type: 'Bearer', expires_in: 25200 } });
    for (let i = 0; i < 3; i++) {
      expect((await requestToken(a.url, account.clientId, wrongSecret, from('198.51.100.8'))).status).toBe(401);
    }
    expect((await requestToken(a.url, account.clientId, wrongSecret, from('198.51.100.8'))).status).toBe(429);
    clock.advance(1000);
    expect((await requestToken(a.url, account.clientId, wrongSecret, from('198.51.100.8'))).status).toBe(401);
  });

  it('refuses an address that guessed too often before any secret is checked, the right one included', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await requestToken(a.url, `ci_${String(i).repeat(24)}`, wrongSecret, from('198.51.100.9'))).status).toBe(
        401,
      );
    }
    const right = await requestToken(b.url, account.clientId, account.clientSecret, from('198.51.100.9'));
    expect(right.status).toBe(429);
    expect(right.body.message).toBe('Too many failed client authentications for this address. Try again in 1 second.');
    expect((await requestToken(b.url, account.clientId, account.clientSecret, from('198.51.100.10'))).status).toBe(200);
  });

  it('counts a client behind an untrusted hop by that hop, whatever X-Forwarded-For it writes', async () => {
    // Only 127.0.0.1 (the proxy) is trusted; this client connects from 127.0.0.2 and rotates the header.
    const strict = await instances.start({ AUTH_TRUSTED_PROXIES: '127.0.0.1' });
    const post = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const body = new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: `ci_${'f'.repeat(23)}${i}`,
          client_secret: wrongSecret,
        }).toString();
        const req = httpRequest(
          `${strict.url}/oidc/token`,
          {
            method: 'POST',
            localAddress: '127.0.0.2',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              'x-forwarded-for': `203.0.113.${i}`,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    for (let i = 0; i < 5; i++) expect(await post(i)).toBe(401);
    expect(await post(5)).toBe(429);
  });
});

describe('forgotten failures', () => {
  it('are pruned once the longest wait and the memory have passed', async () => {
    const db = new DataSource({ type: 'postgres', url: (a.app.get(DataSource).options as { url: string }).url });
    await db.initialize();
    try {
      const count = async () =>
        (await db.query<{ n: number }[]>('SELECT count(*)::int AS n FROM iam.sign_in_failures'))[0]!.n;
      expect(await count()).toBeGreaterThan(0);
      const throttle = a.app.get(SignInThrottle);
      clock.advance(8000 + 60_000 - 1);
      await throttle.prune();
      expect(await count()).toBeGreaterThan(0);
      clock.advance(2000);
      await throttle.prune();
      expect(await count()).toBe(0);
    } finally {
      await db.destroy();
    }
  });
});
