import { withServiceDataSource } from '@strata/db';
import {
  envelopeColumns,
  keyRingOf,
  runReencryption,
  type ReencryptionOptions,
  type ReencryptionReport,
} from '@strata/platform';
import type { InboundConfig } from '../inbound.config.js';
import { INBOUND_SCHEMA, MIGRATIONS } from '../migrations/index.js';

/**
 * `node dist/main.js reencrypt [--check]`: moves the arrivals' sealed bodies and
 * headers to the active key and reports what is left per key version (docs/runbooks.md).
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
      // The binding of arrival-seal.ts: the arrival and the part.
      binding: (row, column) => `inbound.inbound_events:${String(row['id'])}:${column}`,
      ring,
    });
    return runReencryption(db, ring, [arrivals], options);
  });
}
