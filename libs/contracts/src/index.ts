export * from './errors.js';
export * from './ids.js';
export * from './permissions.js';
export * from './rate-limit.js';
export * from './routing.js';
export * from './collections.js';
export * from './events.js';
export * from './webhooks.js';
