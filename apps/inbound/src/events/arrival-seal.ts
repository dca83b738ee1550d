import { KeyRing } from '@strata/crypto';

/** Additional data binding a sealed part to its arrival: copied to another row, it does not open. */
const aad = (id: string, part: 'payload' | 'headers'): string => `inbound.inbound_events:${id}:${part}`;

/** An arrival's body (its bytes as received) and headers, sealed with the key ring's active key. */
export function sealArrival(
  ring: KeyRing,
  id: string,
  body: Buffer,
  headers: Record<string, string>,
): { payload: string; headers: string; keyVersion: number } {
  const payload = ring.encrypt(body, aad(id, 'payload'));
  return {
    payload,
    headers: ring.encrypt(JSON.stringify(headers), aad(id, 'headers')),
    keyVersion: KeyRing.versionOf(payload),
  };
}

/** An arrival's body and headers in the clear. */
export interface OpenedArrival {
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

export function openArrival(ring: KeyRing, row: { id: string; payload: string; headers: string }): OpenedArrival {
  return {
    body: ring.decrypt(row.payload, aad(row.id, 'payload')),
    headers: JSON.parse(ring.decryptString(row.headers, aad(row.id, 'headers'))) as Record<string, string>,
  };
}
