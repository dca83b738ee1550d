export * from './json-logger.js';
export * from './start.js';
