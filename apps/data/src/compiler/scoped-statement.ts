import type { WorkspaceScope } from '@strata/db';

/**
 * SQL compiled from a query, with the scope it was compiled for: its first
 * condition is `workspace_slug = scope.workspace`, and a repository runs it only
 * for that same scope.
 */
export interface ScopedStatement {
  readonly scope: WorkspaceScope;
  readonly sql: string;
  readonly params: unknown[];
}
