import { ComputeFunctionsRuns1764200000000 } from './1764200000000-compute-functions-runs.js';

export const COMPUTE_SCHEMA = 'compute';
export const MIGRATIONS = [ComputeFunctionsRuns1764200000000];
