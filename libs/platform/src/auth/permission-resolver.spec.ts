import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import { ErrorCode } from '@strata/contracts';
import { eventually } from '@strata/testing';
import { Clock, systemClock } from '../clock/clock.js';
import { ServiceConfig } from '../config/service-config.js';
import { StrataException } from '../errors/strata.exception.js';
import { HttpPermissionResolver } from './permission-resolver.js';
import type { Principal } from './principal.js';

/** A stand-in for the auth service's `permissions/me`, answering `status` with `headers`. */
async function authAnswering(status: number, headers: Record<string, string> = {}): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(status === 200 ? { workspace: 'acme', principal: {}, permissions: ['records:read'] } : {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function resolverFor(server: Server, clock: Clock = systemClock): HttpPermissionResolver {
  const config = new ServiceConfig();
  config.AUTH_INTERNAL_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  config.PERMISSION_CACHE_TTL_MS = 1000;
  return new HttpPermissionResolver(config, clock);
}

/** Time held still, moved on by the test. */
class TestClock extends Clock {
  ms = Date.parse('2026-11-29T12:00:00Z');
  now(): Date {
    return new Date(this.ms);
  }
}

/**
 * A stand-in for `permissions/me` whose answer the test changes: each lookup is counted
 * and answered with what `answer` holds when it arrives; `hold` keeps lookups unanswered
 * until `release` is called.
 */
class ScriptedAuth {
  lookups = 0;
  answered = 0;
  answer: { status: number; permissions: string[] } = { status: 200, permissions: ['records:read'] };
  private held: (() => void)[] = [];
  private holding = false;
  readonly server = createServer((_req, res) => {
    this.lookups += 1;
    const { status, permissions } = this.answer;
    const reply = (): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status === 200 ? { workspace: 'acme', principal: {}, permissions } : {}));
      this.answered += 1;
    };
    if (this.holding) this.held.push(reply);
    else reply();
  });

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }
  hold(): void {
    this.holding = true;
  }
  release(): void {
    this.holding = false;
    for (const reply of this.held.splice(0)) reply();
  }
}

const principal: Principal = {
  type: 'user',
  id: 'u1',
  workspace: 'acme',
  groups: [],
  scopes: [],
  credential: { kind: 'bearer', token: 'token-1' },
};

describe('HttpPermissionResolver', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.close();
  });

  it("answers the auth service's 429 as a 429 with its Retry-After, not as the service unavailable", async () => {
    server = await authAnswering(429, { 'retry-after': '7' });
    const refused = await resolverFor(server)
      .resolve(principal, issueWorkspaceScope('acme'))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StrataException);
    expect(refused).toMatchObject({ code: ErrorCode.RATE_LIMITED, headers: { 'Retry-After': '7' } });
  });

  it('answers any other failure of the auth service as unavailable', async () => {
    server = await authAnswering(500);
    await expect(resolverFor(server).resolve(principal, issueWorkspaceScope('acme'))).rejects.toMatchObject({
      code: ErrorCode.UNAVAILABLE,
    });
  });

  it('resolves the permissions the auth service answers', async () => {
    server = await authAnswering(200);
    const resolved = await resolverFor(server).resolve(principal, issueWorkspaceScope('acme'));
    expect([...resolved.permissions]).toEqual(['records:read']);
  });

  describe('refresh ahead (TTL 1000 ms, refreshed in its last 200 ms)', () => {
    let auth: ScriptedAuth;
    let clock: TestClock;
    let resolver: HttpPermissionResolver;
    const scope = issueWorkspaceScope('acme');
    const held = async (): Promise<string[]> => [...(await resolver.resolve(principal, scope)).permissions];

    beforeEach(async () => {
      auth = await new ScriptedAuth().listen();
      server = auth.server;
      clock = new TestClock();
      resolver = resolverFor(auth.server, clock);
      expect(await held()).toEqual(['records:read']);
    });

    it('answers from the entry without a lookup before its last part of life', async () => {
      clock.ms += 799;
      expect(await held()).toEqual(['records:read']);
      expect(auth.lookups).toBe(1);
    });

    it('answers from the entry while one background lookup refreshes it, then serves the new answer', async () => {
      auth.answer = { status: 200, permissions: ['records:read', 'records:create'] };
      auth.hold();
      clock.ms += 800;
      // Answered although the lookup it started is held by the auth service.
      expect(await held()).toEqual(['records:read']);
      clock.ms += 100;
      expect(await held()).toEqual(['records:read']);
      await eventually(() => (auth.lookups === 2 ? true : undefined));
      auth.release();
      await eventually(async () => ((await held()).length === 2 ? true : undefined));
      expect(auth.lookups).toBe(2);
      // The refreshed entry lives from when its lookup was sent (at 800 ms): not refreshed before 1600 ms.
      clock.ms = clock.ms - 900 + 1599;
      await held();
      expect(auth.lookups).toBe(2);
      clock.ms += 1;
      await held();
      await eventually(() => (auth.answered === 3 ? true : undefined));
    });

    it('never answers from an expired entry: past its TTL a request waits for the lookup', async () => {
      auth.answer = { status: 200, permissions: ['records:list'] };
      clock.ms += 1000;
      expect(await held()).toEqual(['records:list']);
      expect(auth.lookups).toBe(2);
    });

    it('a request after expiry waits on the refresh under way instead of asking again', async () => {
      auth.answer = { status: 200, permissions: ['records:list'] };
      auth.hold();
      clock.ms += 900;
      expect(await held()).toEqual(['records:read']);
      await eventually(() => (auth.lookups === 2 ? true : undefined));
      clock.ms += 200;
      const waiting = held();
      auth.release();
      expect(await waiting).toEqual(['records:list']);
      expect(auth.lookups).toBe(2);
    });

    it('a revocation seen by the refresh takes effect at once, not at expiry', async () => {
      auth.answer = { status: 401, permissions: [] };
      clock.ms += 900;
      expect(await held()).toEqual(['records:read']);
      await eventually(() => (auth.answered === 2 ? true : undefined));
      // Still within the entry's TTL: refused once the refresh's 401 has dropped the entry.
      const refused = await eventually(() =>
        resolver.resolve(principal, scope).then(
          () => undefined,
          (err: unknown) => err,
        ),
      );
      expect(refused).toMatchObject({ code: ErrorCode.UNAUTHORIZED });
    });

    it('a refresh that fails leaves the entry to its expiry, then the next request asks again', async () => {
      auth.answer = { status: 500, permissions: [] };
      clock.ms += 800;
      expect(await held()).toEqual(['records:read']);
      await eventually(() => (auth.answered === 2 ? true : undefined));
      clock.ms += 199;
      expect(await held()).toEqual(['records:read']);
      clock.ms += 1;
      auth.answer = { status: 200, permissions: ['records:list'] };
      expect(await held()).toEqual(['records:list']);
    });
  });
});
