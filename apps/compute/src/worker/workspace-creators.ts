import { Injectable, Logger } from '@nestjs/common';
import type { WorkspaceFacts } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { ComputeConfig } from '../compute.config.js';
import { FunctionPrincipalTokens } from './function-principal-tokens.js';

/** Workspaces whose creator a worker keeps (a creator never changes; the oldest answer goes first). */
const KEPT = 10_000;
const LOOKUP_TIMEOUT_MS = 5000;
/** Kept for a workspace a platform administrator created: counted by itself alone. */
const NO_CREATOR = '';

/**
 * Who created each workspace (`creator.<type>.<id>`), asked of the auth
 * service once per workspace with the workspace's function principal's token
 * (`GET {auth_url}/internal/workspaces/{workspace}`, docs/identity.md): a
 * workspace's lost isolates count against its creator too (docs/compute.md,
 * "Suspended workspaces"). A failed lookup is not kept: the run goes on
 * counted by its workspace alone, and the next run asks again.
 */
@Injectable()
export class WorkspaceCreators {
  private readonly logger = new Logger('WorkspaceCreators');
  private readonly creators = new Map<string, string>();
  private readonly asking = new Map<string, Promise<string | undefined>>();
  private readonly base: string;

  constructor(
    config: ComputeConfig,
    private readonly tokens: FunctionPrincipalTokens,
  ) {
    this.base = config.AUTH_INTERNAL_URL.replace(/\/$/, '');
  }

  /** The creator, if known already (no lookup); undefined also for a platform administrator's workspace. */
  known(workspace: string): string | undefined {
    const known = this.creators.get(workspace);
    return known === NO_CREATOR ? undefined : known;
  }

  /**
   * The creator whose workspaces share the back-off: known, or asked of the
   * auth service (one request per workspace at a time); undefined for a
   * workspace a platform administrator created, or when the lookup failed.
   */
  async creatorOf(scope: WorkspaceScope): Promise<string | undefined> {
    const known = this.creators.get(scope.workspace);
    if (known !== undefined) return known === NO_CREATOR ? undefined : known;
    let asking = this.asking.get(scope.workspace);
    if (!asking) {
      asking = this.ask(scope).finally(() => this.asking.delete(scope.workspace));
      this.asking.set(scope.workspace, asking);
    }
    const creator = await asking;
    return creator === NO_CREATOR ? undefined : creator;
  }

  private async ask(scope: WorkspaceScope): Promise<string | undefined> {
    try {
      const token = await this.tokens.tokenFor(scope);
      const answer = await fetch(`${this.base}/internal/workspaces/${encodeURIComponent(scope.workspace)}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS),
      });
      if (!answer.ok) throw new Error(`the auth service answered ${answer.status}`);
      const facts = (await answer.json()) as Partial<WorkspaceFacts>;
      const by = facts.createdBy;
      if (typeof by?.id !== 'string' || typeof by.type !== 'string') throw new Error('the answer names no creator');
      // An administrator creates workspaces for others: theirs count one by one, never together.
      const creator = by.platformAdmin === true ? NO_CREATOR : `${by.type}.${by.id}`;
      if (this.creators.size >= KEPT) this.creators.delete(this.creators.keys().next().value!);
      this.creators.set(scope.workspace, creator);
      return creator;
    } catch (err) {
      this.logger.warn({
        msg: "workspace's creator not known; its losses count against the workspace alone for now",
        workspace: scope.workspace,
        err: String(err),
      });
      return undefined;
    }
  }
}
