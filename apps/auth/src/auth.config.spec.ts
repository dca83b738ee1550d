import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '@strata/platform';
import { AuthConfig } from './auth.config.js';

const KEY = `2:${Buffer.alloc(32, 9).toString('base64')}`;

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(AuthConfig, env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('AuthConfig', () => {
  it('accepts the published admin password only when STRATA_ENV=development is set explicitly', () => {
    expect(problemsOf({ STRATA_ENV: 'development' })).toEqual([]);
    const production: Record<string, string>[] = [
      { STRATA_ENCRYPTION_KEYS: KEY },
      { STRATA_ENV: 'production', STRATA_ENCRYPTION_KEYS: KEY },
    ];
    for (const env of production) {
      expect(problemsOf(env)).toEqual([
        'STRATA_ADMIN_PASSWORD=[secret]: STRATA_ADMIN_PASSWORD must be set: its published development default is accepted only when STRATA_ENV=development',
      ]);
    }
    expect(problemsOf({ STRATA_ENCRYPTION_KEYS: KEY, STRATA_ADMIN_PASSWORD: 'a long operator secret' })).toEqual([]);
  });
});
