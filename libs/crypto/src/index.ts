export * from './compare.js';
export * from './ids.js';
export * from './key-ring.js';
export * from './password.js';
export * from './webhook-signature.js';
export * from './function-principal.js';
export * from './arrival-signature.js';
export * from './delivery-id.js';
