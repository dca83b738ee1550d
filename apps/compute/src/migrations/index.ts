import { ComputeFunctionsRuns1764200000000 } from './1764200000000-compute-functions-runs.js';
import { ComputeEgressArtifacts1764300000000 } from './1764300000000-compute-egress-artifacts.js';
import { ComputeTriggers1764400000000 } from './1764400000000-compute-triggers.js';
import { ComputeTriggerEventRuns1764500000000 } from './1764500000000-compute-trigger-event-runs.js';
import { ComputeTriggerSchedules1764600000000 } from './1764600000000-compute-trigger-schedules.js';
import { ComputeRerunIndex1764700000000 } from './1764700000000-compute-rerun-index.js';
import { ComputeRateLimitedRuns1764800000000 } from './1764800000000-compute-rate-limited-runs.js';
import { ComputeEndpointCredentials1764900000000 } from './1764900000000-compute-endpoint-credentials.js';
import { ComputeRunsOfLiveFunctions1764950000000 } from './1764950000000-compute-runs-of-live-functions.js';
import { ComputeQueuedRunsByWorkspace1765000000000 } from './1765000000000-compute-queued-runs-by-workspace.js';
import { ComputeRecentRunsCount1765000000001 } from './1765000000001-compute-recent-runs-count.js';
import { ComputeSealBindings1766100000000 } from './1766100000000-compute-seal-bindings.js';
import { ComputeRunsRetention1766400002000 } from './1766400002000-compute-runs-retention.js';
import { ComputeUsageExecutions1767500000002 } from './1767500000002-compute-usage-executions.js';

export const COMPUTE_SCHEMA = 'compute';
export const MIGRATIONS = [
  ComputeFunctionsRuns1764200000000,
  ComputeEgressArtifacts1764300000000,
  ComputeTriggers1764400000000,
  ComputeTriggerEventRuns1764500000000,
  ComputeTriggerSchedules1764600000000,
  ComputeRerunIndex1764700000000,
  ComputeRateLimitedRuns1764800000000,
  ComputeEndpointCredentials1764900000000,
  ComputeRunsOfLiveFunctions1764950000000,
  ComputeQueuedRunsByWorkspace1765000000000,
  ComputeRecentRunsCount1765000000001,
  ComputeSealBindings1766100000000,
  ComputeRunsRetention1766400002000,
  ComputeUsageExecutions1767500000002,
];
