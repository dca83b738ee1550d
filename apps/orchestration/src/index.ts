export { OrchestrationConfig } from './orchestration.config.js';
export { createOrchestrationApp, migrateOrchestration } from './create-orchestration-app.js';
export type { OrchestrationAppOptions } from './app.module.js';
export { reencryptOrchestration } from './orchestrations/reencrypt-orchestrations.js';
