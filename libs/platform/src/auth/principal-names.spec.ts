import { describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import { PrincipalNames } from './principal-names.js';

describe('PrincipalNames', () => {
  const acme = issueWorkspaceScope('acme');
  const other = issueWorkspaceScope('other');

  it('answers the last name remembered for a principal, per workspace', () => {
    const names = new PrincipalNames();
    expect(names.nameOf(acme, 'u1')).toBeUndefined();
    names.remember(acme, 'u1', 'Ann');
    names.remember(acme, 'u1', 'Ann Smith');
    expect(names.nameOf(acme, 'u1')).toBe('Ann Smith');
    expect(names.nameOf(other, 'u1')).toBeUndefined();
  });

  it('forgets the least recently seen beyond 10 000 principals', () => {
    const names = new PrincipalNames();
    for (let i = 0; i < 10_000; i++) names.remember(acme, `p${i}`, `n${i}`);
    names.remember(acme, 'p0', 'n0'); // seen again: now the most recent
    names.remember(acme, 'new', 'New');
    expect(names.nameOf(acme, 'p0')).toBe('n0');
    expect(names.nameOf(acme, 'p1')).toBeUndefined();
    expect(names.nameOf(acme, 'new')).toBe('New');
  });
});
