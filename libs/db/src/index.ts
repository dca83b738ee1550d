export * from './data-source.js';
export * from './is-unique-violation.js';
export * from './rows-of.js';
export * from './prepared.js';
export * from './transactions.js';
export * from './workspace-scope.js';
export * from './insert-rows.js';
export * from './pool-guard.js';
