export * from './stack.js';
export * from './events.js';
