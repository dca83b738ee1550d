import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '@strata/platform';
import { AuthConfig } from './auth.config.js';

const KEY = `2:${Buffer.alloc(32, 9).toString('base64')}`;
const FUNCTIONS_KEY = Buffer.alloc(32, 7).toString('base64');

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
      { STRATA_ENCRYPTION_KEYS: KEY, STRATA_FUNCTIONS_PRINCIPAL_KEY: FUNCTIONS_KEY },
      { STRATA_ENV: 'production', STRATA_ENCRYPTION_KEYS: KEY, STRATA_FUNCTIONS_PRINCIPAL_KEY: FUNCTIONS_KEY },
    ];
    for (const env of production) {
      expect(problemsOf(env)).toEqual([
        'STRATA_ADMIN_PASSWORD=[secret]: STRATA_ADMIN_PASSWORD must be set: its published development default is accepted only when STRATA_ENV=development',
      ]);
    }
    expect(
      problemsOf({
        STRATA_ENCRYPTION_KEYS: KEY,
        STRATA_ADMIN_PASSWORD: 'a long operator secret',
        STRATA_FUNCTIONS_PRINCIPAL_KEY: FUNCTIONS_KEY,
      }),
    ).toEqual([]);
  });

  it('refuses the published function principal key outside development, and a key of the wrong size', () => {
    const operator = { STRATA_ENCRYPTION_KEYS: KEY, STRATA_ADMIN_PASSWORD: 'a long operator secret' };
    expect(problemsOf(operator)).toEqual([
      'STRATA_FUNCTIONS_PRINCIPAL_KEY=[secret]: STRATA_FUNCTIONS_PRINCIPAL_KEY must be set: its published development default is accepted only when STRATA_ENV=development',
    ]);
    expect(problemsOf({ ...operator, STRATA_FUNCTIONS_PRINCIPAL_KEY: 'c2hvcnQ=' })).toEqual([
      'STRATA_FUNCTIONS_PRINCIPAL_KEY=[secret]: must be the base64 of 32 bytes',
    ]);
  });
});
