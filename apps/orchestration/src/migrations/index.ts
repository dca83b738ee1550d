import { Orchestrations1765100000000 } from './1765100000000-orchestrations.js';
import { OrchestrationRuns1765100000001 } from './1765100000001-orchestration-runs.js';
import { RunStepsOrder1765100000002 } from './1765100000002-run-steps-order.js';
import { WebhookPaths1765100000003 } from './1765100000003-webhook-paths.js';
import { EventRuns1765100000004 } from './1765100000004-event-runs.js';
import { Schedules1765100000005 } from './1765100000005-schedules.js';
import { RunWorkflowIds1765100000006 } from './1765100000006-run-workflow-ids.js';
import { EventRunsByRun1765100000007 } from './1765100000007-event-runs-by-run.js';
import { EventKeysByAge1765100000008 } from './1765100000008-event-keys-by-age.js';
import { OrchestrationSealBindings1766100000002 } from './1766100000002-orchestration-seal-bindings.js';
import { EventClaimExpiry1766200000001 } from './1766200000001-event-claim-expiry.js';
import { RunsByExpiry1766400004000 } from './1766400004000-runs-by-expiry.js';

export const ORCHESTRATION_SCHEMA = 'orchestration';
export const MIGRATIONS = [
  Orchestrations1765100000000,
  OrchestrationRuns1765100000001,
  RunStepsOrder1765100000002,
  WebhookPaths1765100000003,
  EventRuns1765100000004,
  Schedules1765100000005,
  RunWorkflowIds1765100000006,
  EventRunsByRun1765100000007,
  EventKeysByAge1765100000008,
  OrchestrationSealBindings1766100000002,
  EventClaimExpiry1766200000001,
  RunsByExpiry1766400004000,
];
