import { associatedData, KeyRing, SEAL_PURPOSES, type Binding } from '@strata/crypto';

/**
 * Where a sealed part of an arrival is bound: the part's purpose and the
 * arrival, so that copied to another row or part it does not open (earlier
 * releases: the legacy binding).
 */
export function arrivalBinding(id: string, part: 'payload' | 'headers'): Binding {
  const purpose = part === 'payload' ? SEAL_PURPOSES.arrivalPayload : SEAL_PURPOSES.arrivalHeaders;
  return { aad: associatedData(purpose, id), legacy: [`inbound.inbound_events:${id}:${part}`] };
}

/** An arrival's body (its bytes as received) and headers, sealed with the key ring's active key. */
export function sealArrival(
  ring: KeyRing,
  id: string,
  body: Buffer,
  headers: Record<string, string>,
): { payload: string; headers: string; keyVersion: number } {
  const payload = ring.seal(body, arrivalBinding(id, 'payload'));
  return {
    payload,
    headers: ring.seal(JSON.stringify(headers), arrivalBinding(id, 'headers')),
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
    body: ring.unseal(row.payload, arrivalBinding(row.id, 'payload')).plaintext,
    headers: JSON.parse(ring.unsealString(row.headers, arrivalBinding(row.id, 'headers'))) as Record<string, string>,
  };
}
