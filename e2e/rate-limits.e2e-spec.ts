import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Counters restart at window boundaries (multiples of the window since the
 * epoch). Rather than sleep past one, pick a window whose current one has at
 * least ten minutes left, so the whole file runs inside it.
 */
function windowWithRoom(now = Date.now()): number {
  for (let window = 3_600_000; ; window += 60_000) {
    if (window - (now % window) > 600_000) return window;
  }
}
const WINDOW_MS = windowWithRoom();
let stack: Stack;
const suffix = Date.now().toString(36);
const [wsA, wsB] = [`rl-a-${suffix}`, `rl-b-${suffix}`];
const tokens: Record<string, string> = {};

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_READ_PER_MINUTE: '3', RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
  tokens[wsA] = await adminWorkspaceToken(stack, wsA);
  tokens[wsB] = await adminWorkspaceToken(stack, wsB);
});

afterAll(async () => {
  await stack?.stop();
});

const list = (ws: string) =>
  call('GET', `${stack.authUrl}/workspace/${ws}/api/v1/service-accounts`, { token: tokens[ws]! });

describe('rate limits', () => {
  it('counts reads per workspace and answers 429 with Retry-After once the budget is spent', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await list(wsA);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit')).toBe('3');
      remaining.push(ok.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const limited = await list(wsA);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(limited.body).toMatchObject({ error: 'Too Many Requests', code: 'RATE_LIMITED' });
    expect(limited.body.message).toMatch(/rate limit/i);

    // Another workspace has a budget of its own.
    const other = await list(wsB);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('keeps reads and writes in separate budgets', async () => {
    const created = await call('POST', `${stack.authUrl}/workspace/${wsA}/api/v1/service-accounts`, {
      token: tokens[wsA]!,
      body: { name: 'still-writable' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-ratelimit-limit')).toBe('1000');
  });
});
