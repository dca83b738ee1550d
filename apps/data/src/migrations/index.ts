import { DataCollections1763700000000 } from './1763700000000-data-collections.js';

export const DATA_SCHEMA = 'data';
export const MIGRATIONS = [DataCollections1763700000000];
