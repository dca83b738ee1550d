/** Makes a scope; set once, in WorkspaceScope's static block, and called only by issueWorkspaceScope. */
let mint: (workspace: string) => WorkspaceScope;

/**
 * The workspace an operation may touch, as a value only trusted code can make.
 *
 * Repositories take a `WorkspaceScope` on every method that reads or writes
 * tenant data and put `workspace_slug = scope.workspace` (or a join to a
 * parent row that carries it) into the same statement, so a tenant query
 * without a scope does not compile. Scopes are issued by the access guard for
 * the URL's workspace once the caller's credential is checked against it, and
 * by a short, lint-enforced list of trusted internal sources (an event a
 * consumer took from our own stream, a row a sweeper claimed): see
 * docs/architecture.md, "Workspace scope". Nothing else may call
 * {@link issueWorkspaceScope} or cast a value to `WorkspaceScope`.
 */
export class WorkspaceScope {
  /** Nominal: an object literal with a `workspace` field is not a scope. */
  readonly #issued = true;

  private constructor(readonly workspace: string) {}

  static {
    // The only place the private constructor is reached from: issueWorkspaceScope below.
    mint = (workspace) => new WorkspaceScope(workspace);
  }

  /** Whether the value was issued (not forged by a cast). */
  static isScope(value: unknown): value is WorkspaceScope {
    return typeof value === 'object' && value !== null && #issued in value;
  }

  toString(): string {
    return `WorkspaceScope(${this.workspace})`;
  }
}

/** The shape of a workspace slug (the auth service checks the exact rule when it creates one). */
const WORKSPACE_SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;

/**
 * Issues the scope of one workspace. Callers are restricted by ESLint
 * (`strata/scope-issuers`, eslint/workspace-scope.js) to the access guard and
 * the trusted sources listed there, each with the reason it may.
 */
export function issueWorkspaceScope(workspace: string): WorkspaceScope {
  if (!WORKSPACE_SLUG.test(workspace)) throw new Error(`not a workspace slug: ${JSON.stringify(workspace)}`);
  return mint(workspace);
}
