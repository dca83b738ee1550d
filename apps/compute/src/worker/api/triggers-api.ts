import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import type { JsonObject } from '../../json.js';
import type { ExecutionBudget } from '../../runs/execution-budget.js';
import type { TriggerExecutions } from '../../triggers/trigger-executions.service.js';
import type { FunctionPrincipalPermissions } from './function-principal-permissions.js';
import { ApiRefusal, optionalObjectArg, stringArg, type ApiHandler } from './handler.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `api.invokeTrigger(triggerId, params?)`: what `POST /function-triggers/{id}/execute`
 * does, from inside a function: an on-demand trigger of the run's workspace,
 * `params` as the new run's executionParams. Answers `{jobId}`. A run started this
 * way counts against the workspace's executions limit (over it, the run is recorded
 * as `rate_limited` and `{jobId, status: 'rate_limited'}` answered) and is one level deeper than the run that started it; past `maxDepth` the call
 * is refused, so functions invoking each other cannot loop forever. The workspace's
 * function principal must hold `function-triggers:execute`, as a caller of /execute must
 * (before 2026-11-27 the worker started the trigger whatever its policies, revoked or not).
 */
export function triggerHandlers(
  executions: TriggerExecutions,
  budget: ExecutionBudget,
  permissions: FunctionPrincipalPermissions,
  scope: WorkspaceScope,
  run: { readonly depth: number; readonly by: string },
  maxDepth: number,
): Record<string, ApiHandler> {
  return {
    invokeTrigger: async (args) => {
      const triggerId = stringArg(args, 0, 'triggerId');
      if (!UUID.test(triggerId)) throw new ApiRefusal('triggerId must be a UUID');
      const params: JsonObject = optionalObjectArg(args, 1, 'params');
      if (run.depth + 1 > maxDepth) {
        throw new ApiRefusal(`invokeTrigger refused: runs may start each other at most ${maxDepth} levels deep`);
      }
      try {
        if (!(await permissions.holds(scope, 'function-triggers', 'execute'))) {
          throw new ApiRefusal(
            "403: Missing permission: function-triggers:execute (the workspace's function principal: its group's policies decide what functions may do)",
          );
        }
        const trigger = await executions.onDemand(scope, triggerId);
        const rateLimited = !(await budget.take(scope));
        const queued = await executions.run(scope, trigger, params, 'trigger', run.by, run.depth + 1, rateLimited);
        return { jobId: queued.jobId, status: queued.status };
      } catch (err) {
        if (err instanceof StrataException) throw new ApiRefusal(`${err.status}: ${err.message}`);
        throw err;
      }
    },
  };
}
