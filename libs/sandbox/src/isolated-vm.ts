/**
 * `@strata/sandbox/isolated-vm`: the isolated-vm engine, a separate entry point so
 * that only sandbox workers load the native add-on; the API process imports
 * `@strata/sandbox` (the code check and the interface) alone.
 */
export {
  createIsolatedVmEngine,
  SEARCH_RECORDS_MESSAGE,
  USER_CODE_FILENAME,
  type IsolatedVmEngineOptions,
} from './isolated-vm-engine.js';
