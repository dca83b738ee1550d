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
import type { InboundConfig } from '../inbound.config.js';
import { INBOUND_SCHEMA, MIGRATIONS } from '../migrations/index.js';
import { arrivalBinding } from './arrival-seal.js';

/**
 * `node dist/main.js reencrypt [--check]`: moves the arrivals' sealed bodies and
 * headers to the active key (and their purposes' bindings) and reports what is left per key version (docs/runbooks.md).
 */
export function reencryptInbound(
  config: InboundConfig,
  options: ReencryptionOptions = {},
): Promise<ReencryptionReport[]> {
  const source = { url: config.DATABASE_URL, schema: INBOUND_SCHEMA, entities: [], migrations: MIGRATIONS };
  return withServiceDataSource(source, (db) => {
    const ring = keyRingOf(config);
    const arrivals = envelopeColumns({
      table: 'inbound.inbound_events',
      key: 'id',
      columns: ['payload', 'headers'],
      binding: (row, column) => arrivalBinding(String(row['id']), column as 'payload' | 'headers'),
      ring,
    });
    return runReencryption(db, ring, [arrivals], options);
  });
}

/**
 * `node dist/main.js upgrade`: the inbound schema's due upgrade steps, after its
 * migrations, once the release serves (docs/runbooks.md, "Upgrade steps"): the
 * re-sealing of every envelope under its purpose's binding.
 */
export function upgradeInbound(config: InboundConfig, write?: (line: string) => void): Promise<UpgradeOutcome> {
  const source = { url: config.DATABASE_URL, schema: INBOUND_SCHEMA };
  const steps = [resealBindingsStep(config, (options) => reencryptInbound(config, options))];
  return upgradeCommand('strata-inbound', source, steps, write);
}
