import { applyDecorators, UseGuards } from '@nestjs/common';
import { RateLimit } from '@strata/platform';
import { WorkspaceSuspensionGuard } from './workspace-suspension.guard.js';

/**
 * A route that starts runs: it spends the workspace's executions budget, and a
 * suspended workspace's request is refused (WorkspaceSuspensionGuard).
 */
export const StartsRuns = () => applyDecorators(RateLimit('execute'), UseGuards(WorkspaceSuspensionGuard));
