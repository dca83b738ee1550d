/** The 404 message of an orchestration that does not exist (in the caller's workspace). */
export const ORCHESTRATION_NOT_FOUND = 'Orchestration not found';

/** The additional data sealing an orchestration trigger's signing secret (bound to the orchestration). */
export const secretAad = (id: string): string => `orchestration.trigger.signingSecret:${id}`;
