export * from './code-check.js';
export * from './types.js';
