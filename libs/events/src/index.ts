export * from './jetstream.js';
export * from './trace-context.js';
export * from './publish-batch.js';
export * from './request-reply.js';
export * from './record-events.js';
export * from './triggers-changed.js';
export * from './routed-record-events.js';
export * from './event-interests.js';
