export { ComputeConfig, defaultEndpointIsolates } from './compute.config.js';
export { createComputeApp, migrateCompute } from './create-compute-app.js';
export type { ComputeAppOptions } from './app.module.js';
export { reencryptCompute, upgradeCompute } from './reencrypt-compute.js';
