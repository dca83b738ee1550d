export { DataConfig } from './data.config.js';
export { createDataApp, migrateData } from './create-data-app.js';
export { reencryptData, upgradeData } from './secrets/reencrypt-records.js';
