import { Injectable, Logger } from '@nestjs/common';
import { FUNCTIONS_GROUP, FUNCTIONS_GROUP_POLICIES } from '@strata/contracts';
import {
  functionPrincipalClientId,
  functionPrincipalSecret,
  hashToken,
  newUuid,
  parseFunctionPrincipalKey,
} from '@strata/crypto';
import { issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { AuthConfig } from '../auth.config.js';
import { FunctionPrincipalsRepository } from './function-principals.repository.js';

/**
 * Each workspace's function principal (docs/compute.md, "The function
 * principal"): made with the workspace, and at boot for workspaces made before
 * it existed; its secret follows STRATA_FUNCTIONS_PRINCIPAL_KEY.
 */
@Injectable()
export class FunctionPrincipalsService {
  private readonly logger = new Logger('FunctionPrincipals');
  private readonly key: Buffer;

  constructor(
    private readonly principals: FunctionPrincipalsRepository,
    private readonly transactions: Transactions,
    config: AuthConfig,
  ) {
    this.key = parseFunctionPrincipalKey(config.STRATA_FUNCTIONS_PRINCIPAL_KEY);
  }

  /** Makes the workspace's principal in `tx` when it has none. */
  ensure(scope: WorkspaceScope, tx: Tx): Promise<boolean> {
    const clientId = functionPrincipalClientId(scope.workspace);
    const groupId = newUuid();
    return this.principals.ensure(scope, tx, {
      clientId,
      secretHash: hashToken(functionPrincipalSecret(this.key, clientId)),
      name: 'compute-functions',
      description:
        'The principal compute functions call the platform API as. Restrict what functions may do by changing its groups and their policies.',
      groupId,
      groupName: FUNCTIONS_GROUP,
      groupDescription: 'What compute functions may do through api (their principal is its member)',
      policies: FUNCTIONS_GROUP_POLICIES.map((p) => ({ id: newUuid(), resource: p.resource, actions: p.actions })),
    });
  }

  /** At boot: every workspace has its principal, with the secret of the current key. */
  async ensureAll(): Promise<void> {
    let made = 0;
    let rekeyed = 0;
    for (const workspace of await this.principals.allWorkspaces()) {
      // A workspace read from our own table by this system pass.
      const scope = issueWorkspaceScope(workspace);
      if (await this.transactions.run((tx) => this.ensure(scope, tx))) made++;
      const clientId = functionPrincipalClientId(workspace);
      if (
        await this.principals.setSecretHash(scope, clientId, hashToken(functionPrincipalSecret(this.key, clientId)))
      ) {
        rekeyed++;
      }
    }
    if (made || rekeyed) this.logger.log({ msg: 'function principals', made, rekeyed });
  }
}
