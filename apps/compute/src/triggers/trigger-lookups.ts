import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { Clock } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { TriggerChanges } from './trigger-changes.js';
import type { TriggerEntity } from './trigger.entity.js';
import { TriggersRepository, type FunctionVersionRef } from './triggers.repository.js';

/** A trigger with its function's current version (undefined: the function is gone). */
export interface TriggerWithFunction {
  readonly trigger: TriggerEntity;
  readonly fn: FunctionVersionRef | undefined;
}

/** Lookups kept at once (oldest out first). */
const MAX_KEPT = 10_000;

interface Kept<T> {
  readonly answer: Promise<T>;
  readonly until: number;
  readonly workspace: string;
}

/**
 * The trigger lookups on the paths that start runs, kept per replica for
 * COMPUTE_TRIGGER_CACHE_MS once read (each was a database round trip per call
 * or per record event): the endpoint at a path, the event-driven triggers
 * watching an event of a collection, and (through `keep`) an endpoint's key
 * hash and signing secret. Any change to the workspace's triggers or
 * functions (TriggerChanges: created, updated, paused, resumed or deleted, from
 * this replica or another) drops the workspace's entries at once.
 */
@Injectable()
export class TriggerLookups {
  private readonly kept = new Map<string, Kept<unknown>>();

  constructor(
    private readonly triggers: TriggersRepository,
    private readonly clock: Clock,
    private readonly config: ComputeConfig,
    changes: TriggerChanges,
  ) {
    changes.listen((workspace) => this.forget(workspace));
  }

  /** The live endpoint at `path` (paused ones too); a path with no endpoint is not kept. */
  endpointAt(scope: WorkspaceScope, path: string): Promise<TriggerWithFunction | undefined> {
    return this.keep(
      scope,
      `endpoint/${path}`,
      () => this.triggers.endpointAt(scope, path),
      (found) => !!found,
    );
  }

  /**
   * The live, running event-driven triggers watching `event` on `recordSlug` (none is kept too).
   * `fresh`: read the database now (what was kept is replaced).
   */
  watching(
    scope: WorkspaceScope,
    event: string,
    recordSlug: string,
    options: { fresh?: boolean } = {},
  ): Promise<TriggerWithFunction[]> {
    if (options.fresh) this.kept.delete(`${scope.workspace}\u0000watching/${event}/${recordSlug}`);
    return this.keep(
      scope,
      `watching/${event}/${recordSlug}`,
      () => this.triggers.watchingWithFunctions(scope, event, recordSlug),
      () => true,
    );
  }

  /**
   * Any other read of a workspace's trigger state (`what` names it), kept by the
   * same rules: for COMPUTE_TRIGGER_CACHE_MS, dropped on any change of the
   * workspace's triggers; a failed read, or an answer `keepable` refuses, is not kept.
   */
  keep<T>(scope: WorkspaceScope, what: string, read: () => Promise<T>, keepable: (answer: T) => boolean): Promise<T> {
    const key = `${scope.workspace}\u0000${what}`;
    const now = this.clock.now().getTime();
    const kept = this.kept.get(key) as Kept<T> | undefined;
    if (kept && kept.until > now) return kept.answer;
    const answer = read();
    if (this.config.COMPUTE_TRIGGER_CACHE_MS > 0) {
      if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
      const entry: Kept<T> = { answer, until: now + this.config.COMPUTE_TRIGGER_CACHE_MS, workspace: scope.workspace };
      this.kept.set(key, entry);
      // A failed read, or an answer not to keep, is dropped.
      const drop = () => {
        if (this.kept.get(key) === entry) this.kept.delete(key);
      };
      answer.then((a) => !keepable(a) && drop(), drop);
    }
    return answer;
  }

  private forget(workspace: string): void {
    for (const [key, entry] of this.kept) if (entry.workspace === workspace) this.kept.delete(key);
  }
}
