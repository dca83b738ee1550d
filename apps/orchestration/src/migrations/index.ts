import { Orchestrations1765100000000 } from './1765100000000-orchestrations.js';

export const ORCHESTRATION_SCHEMA = 'orchestration';
export const MIGRATIONS = [Orchestrations1765100000000];
