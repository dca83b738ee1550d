import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './load-config.js';
import { keyRingOf } from './key-ring.config.js';
import { DEVELOPMENT_ENCRYPTION_KEYS, ServiceConfig } from './service-config.js';

const OTHER_KEY = `2:${Buffer.alloc(32, 7).toString('base64')}`;

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(ServiceConfig, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadConfig', () => {
  it('reads defaults, and coerces numbers from the environment', () => {
    const config = loadConfig(ServiceConfig, {
      STRATA_ENV: 'development',
      RATE_LIMIT_READ_PER_MINUTE: '7',
      NATS_PREFIX: 'abc_1',
    });
    expect(config.RATE_LIMIT_READ_PER_MINUTE).toBe(7);
    expect(config.NATS_PREFIX).toBe('abc_1');
    expect(config.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/strata');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('names every bad setting at once, never printing a secret', () => {
    const problems = problemsOf({
      DATABASE_URL: 'mysql://x',
      RATE_LIMIT_READ_PER_MINUTE: 'lots',
      STRATA_ENCRYPTION_KEYS: 'not-a-key-ring',
    });
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/DATABASE_URL="mysql:\/\/x": must be a postgres:\/\/ URL/);
    expect(problems.join('\n')).toMatch(/RATE_LIMIT_READ_PER_MINUTE="lots"/);
    expect(problems.join('\n')).toMatch(/STRATA_ENCRYPTION_KEYS=\[secret\]/);
    expect(problems.join('\n')).not.toContain('not-a-key-ring');
  });

  it('accepts the published development key only when STRATA_ENV=development is set explicitly', () => {
    const refused = [
      'STRATA_ENCRYPTION_KEYS=[secret]: STRATA_ENCRYPTION_KEYS must be set: its published development default is accepted only when STRATA_ENV=development',
    ];
    // Unset means production: a deployment that forgets STRATA_ENV fails safe.
    expect(loadConfig(ServiceConfig, { STRATA_ENV: 'development' }).STRATA_ENV).toBe('development');
    expect(problemsOf({})).toEqual(refused);
    expect(problemsOf({ STRATA_ENV: '' })).toEqual(refused);
    expect(problemsOf({ STRATA_ENV: 'production' })).toEqual(refused);
    expect(problemsOf({ STRATA_ENCRYPTION_KEYS: DEVELOPMENT_ENCRYPTION_KEYS })).toEqual(refused);
    expect(problemsOf({ STRATA_ENCRYPTION_KEYS: OTHER_KEY })).toEqual([]);
    expect(problemsOf({ STRATA_ENV: 'production', STRATA_ENCRYPTION_KEYS: OTHER_KEY })).toEqual([]);
    expect(problemsOf({ STRATA_ENV: 'development', STRATA_ENCRYPTION_KEYS: DEVELOPMENT_ENCRYPTION_KEYS })).toEqual([]);
    expect(problemsOf({ STRATA_ENV: 'staging', STRATA_ENCRYPTION_KEYS: OTHER_KEY })[0]).toMatch(
      /^STRATA_ENV="staging"/,
    );
  });

  it('checks the key ring as a whole, and the active version against it', () => {
    const k = (n: number) => `${n}:${Buffer.alloc(32, n).toString('base64')}`;
    expect(problemsOf({ STRATA_ENCRYPTION_KEYS: `${k(1)},${k(1)}` })).toEqual([
      'STRATA_ENCRYPTION_KEYS=[secret]: is not a usable key ring: key version 1 appears twice',
    ]);
    expect(problemsOf({ STRATA_ENCRYPTION_KEYS: `${k(1)},${k(2)}`, STRATA_ENCRYPTION_ACTIVE_KEY: '1' })).toEqual([]);
    expect(problemsOf({ STRATA_ENCRYPTION_KEYS: k(1), STRATA_ENCRYPTION_ACTIVE_KEY: '2' })).toEqual([
      'STRATA_ENCRYPTION_ACTIVE_KEY=2: must be 0 (the highest version) or a version that STRATA_ENCRYPTION_KEYS holds',
    ]);
    const ring = keyRingOf(loadConfig(ServiceConfig, { STRATA_ENCRYPTION_KEYS: `${k(1)},${k(2)}` }));
    expect(ring.activeVersion).toBe(2);
    const pinned = loadConfig(ServiceConfig, {
      STRATA_ENCRYPTION_KEYS: `${k(1)},${k(2)}`,
      STRATA_ENCRYPTION_ACTIVE_KEY: '1',
    });
    expect(keyRingOf(pinned).activeVersion).toBe(1);
  });
});
