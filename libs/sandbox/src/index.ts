export * from './code-check.js';
export {
  createIsolatedVmEngine,
  SEARCH_RECORDS_MESSAGE,
  USER_CODE_FILENAME,
  type IsolatedVmEngineOptions,
} from './isolated-vm-engine.js';
export * from './types.js';
