export { OrchestrationConfig } from './orchestration.config.js';
export { createOrchestrationApp, migrateOrchestration } from './create-orchestration-app.js';
export type { OrchestrationAppOptions } from './app.module.js';
export { reencryptOrchestration, upgradeOrchestration } from './orchestrations/reencrypt-orchestrations.js';
export { RunActivities } from './temporal/run-activities.js';
export { driveRun, type RunPorts, type RunRef } from './temporal/run-loop.js';
