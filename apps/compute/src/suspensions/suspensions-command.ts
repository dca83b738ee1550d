import type { NatsConnection } from '@nats-io/transport-node';
import { parseLostIsolates, type LostIsolates } from './lost-isolates.js';
import { openSuspensionsBucket } from './workspace-suspensions.js';

/** One workspace's record as the operator's command shows it. */
export interface SuspensionEntry extends LostIsolates {
  readonly workspace: string;
}

/** Every workspace whose runs lost isolates within the records' lifetime (a day), its suspension and refused code. */
export async function listSuspensions(nc: NatsConnection, natsPrefix: string): Promise<SuspensionEntry[]> {
  const kv = await openSuspensionsBucket(nc, natsPrefix);
  const entries: SuspensionEntry[] = [];
  for await (const workspace of await kv.keys()) {
    const entry = await kv.get(workspace);
    const record = entry?.operation === 'PUT' ? parseLostIsolates(entry.string()) : undefined;
    if (record) entries.push({ workspace, ...record });
  }
  return entries.sort((a, b) => a.workspace.localeCompare(b.workspace));
}

/**
 * Forgets the workspace's lost isolates: its suspension and its refused code
 * end within a moment in every compute process (they follow the bucket).
 * Answers whether there was a record.
 */
export async function liftSuspension(nc: NatsConnection, natsPrefix: string, workspace: string): Promise<boolean> {
  const kv = await openSuspensionsBucket(nc, natsPrefix);
  const entry = await kv.get(workspace);
  if (!entry || entry.operation !== 'PUT') return false;
  await kv.delete(workspace);
  return true;
}
