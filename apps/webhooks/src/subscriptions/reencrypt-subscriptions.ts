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
import { MIGRATIONS, WEBHOOKS_SCHEMA } from '../migrations/index.js';
import type { WebhooksConfig } from '../webhooks.config.js';
import { subscriptionBinding } from './subscription-secrets.js';

/**
 * `node dist/main.js reencrypt [--check]`: moves the subscriptions' secrets (current
 * and previous) to the active key and reports what is left per key version
 * (docs/runbooks.md). Delivery bodies hold record events, whose secrets are masked:
 * no envelope there.
 */
export async function reencryptWebhooks(
  config: WebhooksConfig,
  options: ReencryptionOptions = {},
): Promise<ReencryptionReport[]> {
  const source = { url: config.DATABASE_URL, schema: WEBHOOKS_SCHEMA, entities: [], migrations: MIGRATIONS };
  return withServiceDataSource(source, (db) => {
    const ring = keyRingOf(config);
    const subscriptions = envelopeColumns({
      table: 'webhooks.subscriptions',
      key: 'id',
      columns: ['secret', 'previous_secret'],
      binding: (row) => subscriptionBinding(String(row['id'])),
      ring,
    });
    return runReencryption(db, ring, [subscriptions], options);
  });
}

/**
 * `node dist/main.js upgrade`: the webhooks schema's due upgrade steps, after its
 * migrations, once the release serves (docs/runbooks.md, "Upgrade steps"): the
 * re-sealing of every envelope under its purpose's binding.
 */
export function upgradeWebhooks(config: WebhooksConfig, write?: (line: string) => void): Promise<UpgradeOutcome> {
  const source = { url: config.DATABASE_URL, schema: WEBHOOKS_SCHEMA };
  const steps = [resealBindingsStep(config, (options) => reencryptWebhooks(config, options))];
  return upgradeCommand('strata-webhooks', source, steps, write);
}
