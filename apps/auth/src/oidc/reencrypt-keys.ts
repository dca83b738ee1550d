import { withServiceDataSource } from '@strata/db';
import {
  envelopeColumns,
  keyRingOf,
  runReencryption,
  type ReencryptionOptions,
  type ReencryptionReport,
} from '@strata/platform';
import type { AuthConfig } from '../auth.config.js';
import { IAM_SCHEMA, MIGRATIONS } from '../migrations/index.js';
import { providerSecretBinding, signingKeyBinding } from './signing-keys.service.js';

/**
 * `node dist/main.js reencrypt [--check]`: moves the token-signing keys' private
 * halves (retired ones too) and the provider's cookie keys to the active key, and
 * reports what is left per key version (docs/runbooks.md). Client secrets and
 * publishable keys are hashed, not encrypted: nothing to move.
 */
export async function reencryptAuth(
  config: AuthConfig,
  options: ReencryptionOptions = {},
): Promise<ReencryptionReport[]> {
  const source = { url: config.DATABASE_URL, schema: IAM_SCHEMA, entities: [], migrations: MIGRATIONS };
  return withServiceDataSource(source, (db) => {
    const ring = keyRingOf(config);
    const targets = [
      envelopeColumns({
        table: 'iam.signing_keys',
        key: 'kid',
        columns: ['private_jwk'],
        binding: (row) => signingKeyBinding(String(row['kid'])),
        ring,
      }),
      envelopeColumns({
        table: 'iam.secrets',
        key: 'name',
        columns: ['value'],
        binding: (row) => providerSecretBinding(String(row['name'])),
        ring,
      }),
    ];
    return runReencryption(db, ring, targets, options);
  });
}
