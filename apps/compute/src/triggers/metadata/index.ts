export * from './trigger-metadata.js';
export {
  checkParams,
  isEncryptRequest,
  isEncryptedParam,
  MAX_PARAMS,
  MAX_PARAM_NAME_LENGTH,
  paramNameProblem,
  RESERVED_PARAM_PREFIX,
  type EncryptRequest,
  type EncryptedParam,
  type TriggerParamValue,
  type TriggerParams,
} from './params.js';
export { MAX_JSON_DEPTH, type JsonObject, type JsonValue } from './reading.js';
export {
  MAX_INTERVAL_SECONDS,
  nextScheduledTime,
  type CronSchedule,
  type IntervalSchedule,
  type OnceSchedule,
  type Schedule,
} from '@strata/schedule';
