import { describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import { WorkspaceTokens, type IssuedToken } from './workspace-tokens.js';

describe('WorkspaceTokens', () => {
  const acme = issueWorkspaceScope('acme');
  const other = issueWorkspaceScope('other');

  function issuer(answers: Array<IssuedToken | Error>) {
    const asked: string[] = [];
    const issue = async (workspace: string): Promise<IssuedToken> => {
      asked.push(workspace);
      const next = answers.shift() ?? new Error('no more answers');
      if (next instanceof Error) throw next;
      return next;
    };
    return { asked, issue };
  }

  it('asks once per workspace, concurrent callers sharing the request, and keeps the token', async () => {
    const { asked, issue } = issuer([
      { token: 't1', expiresInSeconds: 3600 },
      { token: 't2', expiresInSeconds: 3600 },
    ]);
    const tokens = new WorkspaceTokens(issue);
    const [a, b] = await Promise.all([tokens.tokenFor(acme), tokens.tokenFor(acme)]);
    expect([a, b, await tokens.tokenFor(acme)]).toEqual(['t1', 't1', 't1']);
    expect(await tokens.tokenFor(other)).toBe('t2');
    expect(asked).toEqual(['acme', 'other']);
  });

  it('does not keep a failed request, and asks again after forget', async () => {
    const { asked, issue } = issuer([
      new Error('auth unreachable'),
      { token: 't1', expiresInSeconds: 3600 },
      { token: 't2', expiresInSeconds: 3600 },
    ]);
    const tokens = new WorkspaceTokens(issue);
    await expect(tokens.tokenFor(acme)).rejects.toThrow('auth unreachable');
    expect(await tokens.tokenFor(acme)).toBe('t1');
    tokens.forget(acme);
    expect(await tokens.tokenFor(acme)).toBe('t2');
    expect(asked).toEqual(['acme', 'acme', 'acme']);
  });

  it('renews a token that has passed its renewal time', async () => {
    const { asked, issue } = issuer([
      { token: 'short', expiresInSeconds: 0 },
      { token: 'fresh', expiresInSeconds: 3600 },
    ]);
    const tokens = new WorkspaceTokens(issue);
    expect(await tokens.tokenFor(acme)).toBe('short');
    expect(await tokens.tokenFor(acme)).toBe('fresh');
    expect(asked).toHaveLength(2);
  });
});
