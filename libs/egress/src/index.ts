export * from './address-verdict.js';
export * from './destination.js';
export * from './dns-resolver.js';
export * from './egress-lookup.js';
export * from './special-purpose-blocks.js';
