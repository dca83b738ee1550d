import { withServiceDataSource } from '@strata/db';
import {
  envelopeColumns,
  keyRingOf,
  type ReencryptionOptions,
  type ReencryptionReport,
  resealBindingsStep,
  runReencryption,
  upgradeCommand,
  type UpgradeOutcome,
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

/**
 * `node dist/main.js upgrade`: the auth schema's due upgrade steps, after its
 * migrations, once the release serves (docs/runbooks.md, "Upgrade steps"): the
 * re-sealing of every envelope under its purpose's binding.
 */
export function upgradeAuth(config: AuthConfig, write?: (line: string) => void): Promise<UpgradeOutcome> {
  const source = { url: config.DATABASE_URL, schema: IAM_SCHEMA };
  const steps = [resealBindingsStep(config, (options) => reencryptAuth(config, options))];
  return upgradeCommand('strata-auth', source, steps, write);
}
