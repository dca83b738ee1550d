import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import { ErrorCode } from '@strata/contracts';
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

function resolverFor(server: Server): HttpPermissionResolver {
  const config = new ServiceConfig();
  config.AUTH_INTERNAL_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return new HttpPermissionResolver(config);
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
});
