import type { WorkspaceScope } from '@strata/db';

/** A token the auth service issued, and how long it lives. */
export interface IssuedToken {
  readonly token: string;
  readonly expiresInSeconds: number;
}

/** A token is renewed this long before it expires (or at half its life, if that is later). */
const RENEW_BEFORE_MS = 5 * 60_000;

/**
 * One bearer token per workspace (a workspace's function principal, typically),
 * from `issue`, kept until shortly before it expires. One request per workspace
 * at a time; a failed request is not kept, so the next call asks again.
 */
export class WorkspaceTokens {
  private readonly tokens = new Map<string, Promise<{ token: string; renewAt: number }>>();

  constructor(private readonly issue: (workspace: string) => Promise<IssuedToken>) {}

  async tokenFor(scope: WorkspaceScope): Promise<string> {
    const cached = this.tokens.get(scope.workspace);
    if (cached) {
      const held = await cached.catch(() => undefined);
      if (held && Date.now() < held.renewAt) return held.token;
    }
    const request = this.request(scope.workspace);
    this.tokens.set(scope.workspace, request);
    request.catch(() => {
      if (this.tokens.get(scope.workspace) === request) this.tokens.delete(scope.workspace);
    });
    return (await request).token;
  }

  /** Forgets a workspace's token (a service refused it: revoked, rekeyed). */
  forget(scope: WorkspaceScope): void {
    this.tokens.delete(scope.workspace);
  }

  private async request(workspace: string): Promise<{ token: string; renewAt: number }> {
    const issued = await this.issue(workspace);
    const lifetimeMs = issued.expiresInSeconds * 1000;
    return { token: issued.token, renewAt: Date.now() + Math.max(lifetimeMs / 2, lifetimeMs - RENEW_BEFORE_MS) };
  }
}
