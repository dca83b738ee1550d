export * from './jetstream.js';
export * from './trace-context.js';
export * from './publish-batch.js';
