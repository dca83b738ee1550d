import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Clock, workspaceOf, type AuthenticatedRequest } from '@strata/platform';
import { refusalException } from './suspension-refusal.js';
import { WorkspaceSuspensions } from './workspace-suspensions.js';

/**
 * Refuses, with 429, a request that would start a run of a suspended workspace
 * (test runs, executions, re-runs): docs/compute.md, "Suspended workspaces".
 * Workers refuse such runs too, whatever started them.
 */
@Injectable()
export class WorkspaceSuspensionGuard implements CanActivate {
  constructor(
    private readonly suspensions: WorkspaceSuspensions,
    private readonly clock: Clock,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const workspace = workspaceOf(context.switchToHttp().getRequest<AuthenticatedRequest>());
    const refused = workspace === undefined ? undefined : this.suspensions.workspaceRefusal(workspace);
    if (refused) throw refusalException(refused, this.clock.now());
    return true;
  }
}
