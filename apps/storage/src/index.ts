export { StorageConfig } from './storage.config.js';
export { createStorageApp, migrateStorage } from './create-storage-app.js';
export type { StorageAppOptions } from './app.module.js';
export { PurgeSweeper } from './purge/purge-sweeper.js';
