import { describe, expect, it } from '@jest/globals';
import { invalidActions } from './validate-actions.js';
import { effectivePermissions } from '../permissions/effective-permissions.js';
import { invalidPublishablePermissions } from '../publishable-keys/publishable-keys.service.js';

describe('policy actions', () => {
  it('refuses read with a hint and unknown actions with the valid list', () => {
    expect(invalidActions('records', ['retrieve', 'read', 'fly'])).toEqual([
      { field: 'actions[1]', message: expect.stringContaining('use retrieve and list') },
      {
        field: 'actions[2]',
        message: expect.stringContaining(
          'valid actions: create, retrieve, list, update, delete, manage, validate, execute',
        ),
      },
    ]);
  });

  it('accepts reveal on secrets only, and refuses duplicates', () => {
    expect(invalidActions('secrets', ['reveal'])).toEqual([]);
    expect(invalidActions('records', ['reveal'])).toHaveLength(1);
    expect(invalidActions('records', ['list', 'list'])).toEqual([
      { field: 'actions[1]', message: "'list' appears more than once" },
    ]);
  });
});

describe('effective permissions', () => {
  it('unions policies and lets the administrators group grant everything', () => {
    expect(
      effectivePermissions([
        { groupName: 'a', resource: 'records', actions: ['list'] },
        { groupName: 'b', resource: 'records', actions: ['list', 'create'] },
        { groupName: 'c', resource: null, actions: null },
      ]),
    ).toEqual(['records:create', 'records:list']);
    expect(effectivePermissions([{ groupName: 'workspace_administrators', resource: null, actions: null }])).toEqual([
      '*',
    ]);
  });
});

describe('publishable key permissions', () => {
  it('allows reads on public resources only', () => {
    expect(invalidPublishablePermissions(['records:list', 'structures:retrieve'])).toEqual([]);
    expect(invalidPublishablePermissions(['records:create', 'secrets:list', 'nope:list']).map((e) => e.field)).toEqual([
      'permissions[0]',
      'permissions[1]',
      'permissions[2]',
    ]);
  });
});
