import { Injectable, Logger } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf } from '@strata/platform';
import { AllowedDomainsRepository } from '../../allowed-domains/allowed-domains.repository.js';
import { ComputeConfig } from '../../compute.config.js';
import { RunDocumentsRepository } from '../../run-documents/run-documents.repository.js';
import { ExecutionBudget } from '../../runs/execution-budget.js';
import type { RunEntity } from '../../runs/run.entity.js';
import { TriggerExecutions } from '../../triggers/trigger-executions.service.js';
import { RunBridge } from '../run-bridge.js';
import { hmacSha256 } from './crypto-api.js';
import { DataApi } from './data-api.js';
import { documentHandlers } from './documents-api.js';
import { FunctionPrincipalPermissions } from './function-principal-permissions.js';
import { httpHandlers } from './http-api.js';
import { HttpEgress } from './http-egress.js';
import { recordHandlers } from './records-api.js';
import { triggerHandlers } from './triggers-api.js';

/** Builds the host side of `api` for one run, within the run's own workspace. */
@Injectable()
export class RunApi {
  private readonly ring: KeyRing;
  private readonly logger = new Logger('RunApi');

  constructor(
    private readonly data: DataApi,
    private readonly egress: HttpEgress,
    private readonly domains: AllowedDomainsRepository,
    private readonly documents: RunDocumentsRepository,
    private readonly executions: TriggerExecutions,
    private readonly budget: ExecutionBudget,
    private readonly permissions: FunctionPrincipalPermissions,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
  ) {
    this.ring = keyRingOf(config);
  }

  bridgeFor(scope: WorkspaceScope, run: RunEntity, beforeEffect?: () => Promise<void>): RunBridge {
    const runId = run.id;
    const depth = Number(run.executionContext['invocationDepth'] ?? 0);
    return new RunBridge(
      {
        hmacSha256,
        ...recordHandlers(this.data, scope),
        ...httpHandlers(this.egress, this.domains, scope),
        ...documentHandlers(this.documents, this.ring, this.config, scope, runId, () => this.clock.now()),
        ...triggerHandlers(
          this.executions,
          this.budget,
          this.permissions,
          scope,
          { depth: Number.isInteger(depth) ? depth : 0, by: run.createdBy },
          this.config.COMPUTE_MAX_INVOCATION_DEPTH,
        ),
      },
      (method, err) =>
        this.logger.error({ msg: 'api call failed on the platform side', method, runId, err: String(err) }),
      beforeEffect,
    );
  }
}
