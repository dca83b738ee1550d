import { describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope, WorkspaceScope } from './workspace-scope.js';

describe('WorkspaceScope', () => {
  it('is issued for a workspace slug, and only issued values are scopes', () => {
    const scope = issueWorkspaceScope('acme-prod');
    expect(scope.workspace).toBe('acme-prod');
    expect(WorkspaceScope.isScope(scope)).toBe(true);
    expect(WorkspaceScope.isScope({ workspace: 'acme-prod' })).toBe(false);
  });

  it('refuses what is not a workspace slug', () => {
    for (const bad of ['', 'Acme', 'a b', 'a\u0000b', '-a', 'x'.repeat(101)]) {
      expect(() => issueWorkspaceScope(bad)).toThrow(/not a workspace slug/);
    }
  });
});
