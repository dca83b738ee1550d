export * from './types.js';
export * from './paths.js';
export * from './decision.js';
export * from './validate-steps.js';
export * from './interpreter.js';
export * from './requirement.js';
