import { associatedData, KeyRing, SEAL_PURPOSES, type Binding } from '@strata/crypto';
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
  /**
   * The names of `triggerParams` the trigger stores encrypted: their values are
   * masked in the run's stored logs and result (worker/run-masking.ts). Absent
   * on runs queued by earlier releases.
   */
  readonly secretParams?: readonly string[];
  /**
   * An orchestration compute step's run: `executionParams.steps.<id>` holds `{output}`, and the
   * old form `steps.<id>.<field>` is still answered, with a deprecation warning naming `sunset`
   * in the run's logs (docs/orchestration.md). Absent on every other run.
   */
  readonly legacyStepOutputs?: { readonly sunset: string };
}

/** Where a run's parameters are sealed: bound to the run (earlier releases: the legacy binding). */
export const runParamsBinding = (runId: string): Binding => ({
  aad: associatedData(SEAL_PURPOSES.runParams, runId),
  legacy: [`compute.runs.params:${runId}`],
});

/** Seals a run's parameters with the key ring's active key (they may hold decrypted trigger secrets). */
export function sealRunParams(ring: KeyRing, runId: string, params: RunParams): { sealed: string; keyVersion: number } {
  const sealed = ring.seal(JSON.stringify(params), runParamsBinding(runId));
  return { sealed, keyVersion: KeyRing.versionOf(sealed) };
}

export function openRunParams(ring: KeyRing, runId: string, sealed: string): RunParams {
  return JSON.parse(ring.unsealString(sealed, runParamsBinding(runId))) as RunParams;
}
