import type { DataSource } from 'typeorm';
import { managerOf, type Tx } from './transactions.js';

/**
 * The advisory locks a record-event consumer takes around its interests
 * (docs/events.md, "Routed events"), held until `tx` ends, in the consumer's
 * own database:
 *
 * - `change`: a change of the consumer's interest in `workspace`: a create or
 *   activation (held from before its `add` until its commit) or a narrowing
 *   (held while it reads what is left and `replace`s). Two replicas changing one
 *   workspace take turns, so a narrowing never drops an addition in flight.
 * - `all`: the consumer replacing its whole interest set (at start): waits for
 *   every change in flight, and holds new ones off.
 * - `settled`: a routed event found nothing to do: waits for the workspace's
 *   changes in flight (the interest it was routed by was added by one of them,
 *   which may not have committed yet), so the caller's next read sees them.
 */
export async function lockEventInterest(
  db: DataSource,
  tx: Tx,
  consumer: string,
  mode: 'change' | 'all' | 'settled',
  workspace?: string,
): Promise<void> {
  const manager = managerOf(db, tx);
  const everyKey = `event-interest:${consumer}:*`;
  const workspaceKey = `event-interest:${consumer}:${workspace ?? ''}`;
  if (mode === 'all') {
    await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [everyKey]);
  } else if (mode === 'change') {
    await manager.query(
      'SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0)), pg_advisory_xact_lock(hashtextextended($2, 0))',
      [everyKey, workspaceKey],
    );
  } else {
    await manager.query('SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', [workspaceKey]);
  }
}
