import { loadConfig } from '@strata/platform';
import { testNatsPrefix } from '@strata/testing';
import { ComputeConfig } from '../../src/compute.config.js';

/** A compute config for one test file: development keys, a NATS prefix of its own, and `overrides`. */
export function computeTestConfig(overrides: Record<string, string> = {}): ComputeConfig {
  return loadConfig(ComputeConfig, {
    ...process.env,
    STRATA_ENV: 'development',
    NATS_PREFIX: testNatsPrefix(),
    ...overrides,
  });
}
