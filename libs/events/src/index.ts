export * from './jetstream.js';
export * from './trace-context.js';
