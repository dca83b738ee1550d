export { DataConfig } from './data.config.js';
export { createDataApp, migrateData } from './create-data-app.js';
export { reencryptData } from './secrets/reencrypt-records.js';
