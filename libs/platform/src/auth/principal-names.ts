import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';

/** Principals remembered at most; the least recently seen go first. */
const MAX_NAMES = 10_000;

/**
 * The names of the principals this replica has served, as the permission lookup (ADR 0002)
 * last answered them: a user's name (else email), a service account's name. The access
 * guard remembers each caller's name before its request runs, so work done for the request
 * (a changelog entry) can record who acted by name, at no cost of its own; a rename shows
 * once the lookup's cache (`PERMISSION_CACHE_TTL_MS`) asks again.
 */
@Injectable()
export class PrincipalNames {
  private readonly names = new Map<string, string>();

  remember(scope: WorkspaceScope, principalId: string, name: string): void {
    const key = keyOf(scope.workspace, principalId);
    this.names.delete(key);
    this.names.set(key, name);
    if (this.names.size > MAX_NAMES) {
      const oldest = this.names.keys().next().value;
      if (oldest !== undefined) this.names.delete(oldest);
    }
  }

  /** The principal's name, when a request of theirs in the workspace was served here. */
  nameOf(scope: WorkspaceScope, principalId: string): string | undefined {
    return this.names.get(keyOf(scope.workspace, principalId));
  }
}

function keyOf(workspace: string, principalId: string): string {
  return `${workspace}\u0000${principalId}`;
}
