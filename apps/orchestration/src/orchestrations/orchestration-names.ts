import { associatedData, SEAL_PURPOSES, type Binding } from '@strata/crypto';

/** The 404 message of an orchestration that does not exist (in the caller's workspace). */
export const ORCHESTRATION_NOT_FOUND = 'Orchestration not found';

/** Where an orchestration trigger's signing secret is sealed: bound to the orchestration (earlier releases: the legacy binding). */
export const secretBinding = (id: string): Binding => ({
  aad: associatedData(SEAL_PURPOSES.orchestrationSigningSecret, id),
  legacy: [`orchestration.trigger.signingSecret:${id}`],
});
