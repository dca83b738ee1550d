/**
 * `GET {auth_url}/internal/workspaces/{workspace}`: what the auth service tells
 * the other services about a workspace (docs/identity.md, "Workspace facts for
 * the services"). Asked with a bearer token of that workspace, as the services
 * ask for permissions (the compute service presents its function principal's).
 */
export interface WorkspaceFacts {
  readonly slug: string;
  readonly id: string;
  /**
   * The principal that created the workspace: always a user (only users create
   * workspaces). `platformAdmin`: a platform administrator, who creates
   * workspaces for others (the compute service does not count one tenant's lost
   * isolates against the other tenants' workspaces an administrator created).
   */
  readonly createdBy: { readonly type: 'user'; readonly id: string; readonly platformAdmin: boolean };
  readonly createdAt: string;
}
