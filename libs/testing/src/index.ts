export * from './database.js';
export * from './isolation.js';
export * from './clock.js';
export * from './dns-server.js';
