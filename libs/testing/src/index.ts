export * from './database.js';
export * from './isolation.js';
