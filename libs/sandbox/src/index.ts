export * from './code-check.js';
export * from './types.js';
// The isolated-vm engine is `@strata/sandbox/isolated-vm`: importing this entry never loads the native add-on.
