import type { KeyRing } from '@strata/crypto';

/** Additional data binding a sealed document to its id. */
const aad = (id: string): string => `compute.run_documents:${id}`;

export function sealDocument(ring: KeyRing, id: string, json: string): string {
  return ring.encrypt(json, aad(id));
}

export function openDocument(ring: KeyRing, id: string, sealed: string): string {
  return ring.decryptString(sealed, aad(id));
}
