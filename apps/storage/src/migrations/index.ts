import { StorageFiles1768500000000 } from './1768500000000-storage-files.js';

export const STORAGE_SCHEMA = 'storage';
export const MIGRATIONS = [StorageFiles1768500000000];
