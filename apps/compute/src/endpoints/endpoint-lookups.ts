import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { Clock } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { TriggerChanges } from '../triggers/trigger-changes.js';
import type { TriggerEntity } from '../triggers/trigger.entity.js';
import { TriggersRepository, type FunctionVersionRef } from '../triggers/triggers.repository.js';

type Found = { readonly trigger: TriggerEntity; readonly fn: FunctionVersionRef | undefined };

/** Endpoints kept at once (oldest out first). */
const MAX_KEPT = 10_000;

/**
 * The endpoint trigger at a path and its function's current version, kept for
 * COMPUTE_ENDPOINT_CACHE_MS once read: the lookup was a database round trip on
 * every call. Any change to the workspace's triggers or functions (TriggerChanges,
 * from this replica or another) drops the workspace's entries at once. A path
 * with no endpoint is not kept, so a new endpoint answers from its first call.
 */
@Injectable()
export class EndpointLookups {
  private readonly kept = new Map<string, { found: Promise<Found | undefined>; until: number; workspace: string }>();

  constructor(
    private readonly triggers: TriggersRepository,
    private readonly clock: Clock,
    private readonly config: ComputeConfig,
    changes: TriggerChanges,
  ) {
    changes.listen((workspace) => this.forget(workspace));
  }

  find(scope: WorkspaceScope, path: string): Promise<Found | undefined> {
    const key = `${scope.workspace}/${path}`;
    const now = this.clock.now().getTime();
    const kept = this.kept.get(key);
    if (kept && kept.until > now) return kept.found;
    const found = this.triggers.endpointAt(scope, path);
    if (this.config.COMPUTE_ENDPOINT_CACHE_MS > 0) {
      if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
      const entry = { found, until: now + this.config.COMPUTE_ENDPOINT_CACHE_MS, workspace: scope.workspace };
      this.kept.set(key, entry);
      // A failed read or no endpoint is not kept.
      const drop = () => {
        if (this.kept.get(key) === entry) this.kept.delete(key);
      };
      found.then((f) => f === undefined && drop(), drop);
    }
    return found;
  }

  private forget(workspace: string): void {
    for (const [key, entry] of this.kept) if (entry.workspace === workspace) this.kept.delete(key);
  }
}
