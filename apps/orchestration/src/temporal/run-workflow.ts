import { isCancellation, proxyActivities, sleep, type RetryPolicy } from '@temporalio/workflow';
import type { RunActivities } from './run-activities.js';
import { driveRun, type RunEnd, type RunRef } from './run-loop.js';

/**
 * The Temporal workflow of one orchestration run. It holds no state of its
 * own beyond the loop's: where the run stands is in its rows, which the
 * activities write. Deterministic by construction: it imports the pure loop
 * and interpreter, and the activities as a type only (the bundle test fails
 * otherwise).
 *
 * - Decisions are evaluated in the workflow and recorded by an activity.
 * - A delay is a durable timer between two recording activities.
 * - A compute step's attempt is one activity with the step's timeout (plus a
 *   minute to start and record it); its retries are attempts the loop makes
 *   after the step's backoff, on a durable timer, so every attempt is a
 *   run-step row and the backoff is the interpreter's, as on the embedded
 *   engine. Temporal's own retries of an activity cover the platform failing
 *   (compute or the database unreachable): they are the same attempt again, and
 *   the activity finds its function run instead of starting another.
 */

/** Temporal's retries of an activity whose platform failed; never a retry of a step. */
const PLATFORM_RETRY: RetryPolicy = {
  initialInterval: '500 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 20,
};

const records = proxyActivities<RunActivities>({ startToCloseTimeout: '30 seconds', retry: PLATFORM_RETRY });

/** How long past a compute step's own timeout its activity may take (starting the run, recording its end). */
const COMPUTE_ACTIVITY_SLACK_MS = 60_000;

export async function orchestrationRun(ref: RunRef): Promise<RunEnd> {
  try {
    return await driveRun(ref, {
      begin: records.begin,
      decision: records.decision,
      delayStarted: records.delayStarted,
      delayEnded: records.delayEnded,
      finish: records.finish,
      compute: (r, at, timeoutMs) =>
        proxyActivities<RunActivities>({
          startToCloseTimeout: timeoutMs + COMPUTE_ACTIVITY_SLACK_MS,
          heartbeatTimeout: '30 seconds',
          retry: PLATFORM_RETRY,
        }).compute(r, at),
      sleep: (ms) => sleep(ms),
    });
  } catch (err) {
    // Cancelled through the API, which has recorded the run as failed already.
    if (isCancellation(err)) return 'closed';
    // An activity the platform kept failing: the run fails rather than stay running.
    const reason = `The run's workflow failed: ${err instanceof Error ? err.message : String(err)}`;
    await records.finish(ref, { kind: 'fail', reason });
    return 'failed';
  }
}
