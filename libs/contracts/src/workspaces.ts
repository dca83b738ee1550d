/**
 * `GET {auth_url}/internal/workspaces/{workspace}`: what the auth service tells
 * the other services about a workspace (docs/identity.md, "Workspace facts for
 * the services"). Asked with a bearer token of that workspace, as the services
 * ask for permissions (the compute service presents its function principal's).
 */
export interface WorkspaceFacts {
  readonly slug: string;
  readonly id: string;
  /** The principal that created the workspace: always a user (only users create workspaces). */
  readonly createdBy: { readonly type: 'user'; readonly id: string };
  readonly createdAt: string;
}
