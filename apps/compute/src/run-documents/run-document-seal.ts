import { associatedData, SEAL_PURPOSES, type Binding, type KeyRing } from '@strata/crypto';

/** Where a stored document is sealed: bound to its id (earlier releases: the legacy binding). */
export const documentBinding = (id: string): Binding => ({
  aad: associatedData(SEAL_PURPOSES.runDocument, id),
  legacy: [`compute.run_documents:${id}`],
});

export function sealDocument(ring: KeyRing, id: string, json: string): string {
  return ring.seal(json, documentBinding(id));
}

export function openDocument(ring: KeyRing, id: string, sealed: string): string {
  return ring.unsealString(sealed, documentBinding(id));
}
