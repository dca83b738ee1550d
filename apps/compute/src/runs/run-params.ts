import type { KeyRing } from '@strata/crypto';
import { KeyRing as Ring } from '@strata/crypto';
import type { EndpointRequest } from '@strata/sandbox';

/**
 * What a run is executed with: the trigger's static parameters and this
 * invocation's input; for endpoint code, the HTTP request (`context.req`),
 * whose presence makes the run execute `export default async (context)`.
 */
export interface RunParams {
  readonly triggerParams: unknown;
  readonly executionParams: unknown;
  readonly request?: EndpointRequest;
}

/** Additional data binding a sealed parameter envelope to its run. */
const aad = (runId: string): string => `compute.runs.params:${runId}`;

/** Seals a run's parameters with the key ring's active key (they may hold decrypted trigger secrets). */
export function sealRunParams(ring: KeyRing, runId: string, params: RunParams): { sealed: string; keyVersion: number } {
  const sealed = ring.encrypt(JSON.stringify(params), aad(runId));
  return { sealed, keyVersion: Ring.versionOf(sealed) };
}

export function openRunParams(ring: KeyRing, runId: string, sealed: string): RunParams {
  return JSON.parse(ring.decryptString(sealed, aad(runId))) as RunParams;
}
