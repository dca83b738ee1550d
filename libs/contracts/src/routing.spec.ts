import { describe, expect, it } from '@jest/globals';
import { matchRoute } from './routing.js';
import { ErrorCode, statusOf } from './errors.js';
import { permits } from './permissions.js';

describe('routing table', () => {
  it.each([
    ['/workspace/api/v1/workspaces', 'auth', false],
    ['/data/workspace/acme/api/v1/records', 'data', false],
    ['/data/workspace/acme/api/v1/compute-functions/1', 'compute', false],
    ['/data/workspace/acme/api/v1/webhook-subscriptions', 'webhooks', false],
    ['/data/workspace/acme/api/v1/http-trigger/x', 'inbound', false],
    ['/orchestration/ws/acme/api/v1/orchestrations', 'orchestration', false],
  ])('routes %s to %s', (path, service, deprecated) => {
    expect(matchRoute(path)).toMatchObject({ route: { service }, path, deprecated });
  });

  it('rewrites older variants and flags them deprecated', () => {
    expect(matchRoute('/orchestration/workspace/acme/api/v1/orchestrations')).toMatchObject({
      path: '/orchestration/ws/acme/api/v1/orchestrations',
      deprecated: true,
    });
    expect(matchRoute('/iam/workspace/acme/api/v1/service-accounts/3/rotate')).toMatchObject({
      route: { service: 'auth' },
      path: '/workspace/acme/api/v1/service-accounts/3/rotate',
      deprecated: true,
    });
  });

  it('does not route unknown paths or the token endpoint on {base_url}', () => {
    expect(matchRoute('/oidc/token')).toBeUndefined();
    expect(matchRoute('/data/workspace/Bad_WS/api/v1/records')).toBeUndefined();
    expect(matchRoute('/')).toBeUndefined();
  });
});

describe('errors and permissions', () => {
  it('maps every code to a status', () => {
    for (const code of Object.values(ErrorCode)) expect(statusOf(code)).toBeGreaterThanOrEqual(400);
    expect(statusOf(ErrorCode.DUPLICATE_KEY)).toBe(409);
    expect(statusOf(ErrorCode.QUOTA_EXCEEDED)).toBe(429);
  });

  it('grants manage and * but nothing else implicitly', () => {
    expect(permits(new Set(['records:manage']), 'records', 'delete')).toBe(true);
    expect(permits(new Set(['*']), 'secrets', 'reveal')).toBe(true);
    expect(permits(new Set(['records:list']), 'records', 'retrieve')).toBe(false);
  });
});
