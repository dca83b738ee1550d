import { describe, expect, it } from '@jest/globals';
import { invalidActions, invalidCollections, policyWarnings } from './validate-actions.js';
import { effectivePermissions } from '../permissions/effective-permissions.js';
import { invalidPublishablePermissions } from '../publishable-keys/publishable-keys.service.js';

describe('policy actions', () => {
  it('accepts read, which grants nothing, with a warning; refuses unknown actions with the valid list', () => {
    expect(invalidActions('records', ['retrieve', 'read', 'fly'])).toEqual([
      {
        field: 'actions[2]',
        message: expect.stringContaining(
          'valid actions: create, retrieve, list, update, delete, manage, validate, execute',
        ),
      },
    ]);
    expect(policyWarnings(['retrieve', 'read'])).toEqual([
      { field: 'actions[1]', message: expect.stringContaining("'read' is not an action and grants nothing") },
    ]);
    expect(policyWarnings(['retrieve', 'list'])).toEqual([]);
  });

  it('accepts reveal on secrets only, and refuses duplicates', () => {
    expect(invalidActions('secrets', ['reveal'])).toEqual([]);
    expect(invalidActions('records', ['reveal'])).toHaveLength(1);
    expect(invalidActions('records', ['list', 'list'])).toEqual([
      { field: 'actions[1]', message: "'list' appears more than once" },
    ]);
  });

  it('lets only a records policy name collections', () => {
    expect(invalidCollections('records', ['orders'])).toEqual([]);
    expect(invalidCollections('structures', undefined)).toEqual([]);
    expect(invalidCollections('structures', null)).toEqual([]);
    expect(invalidCollections('structures', ['orders'])).toEqual([
      { field: 'collections', message: expect.stringContaining('only a policy on records') },
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
    ).toEqual({ permissions: ['records:create', 'records:list'], collections: {} });
    expect(effectivePermissions([{ groupName: 'workspace_administrators', resource: null, actions: null }])).toEqual({
      permissions: ['*'],
      collections: {},
    });
  });

  it('grants nothing for read', () => {
    expect(effectivePermissions([{ groupName: 'a', resource: 'records', actions: ['read', 'list'] }])).toEqual({
      permissions: ['records:list'],
      collections: {},
    });
  });

  it('keeps scoped records actions per collection, unless another policy grants them everywhere', () => {
    expect(
      effectivePermissions([
        { groupName: 'a', resource: 'records', actions: ['list', 'update'], collections: ['orders'] },
        { groupName: 'b', resource: 'records', actions: ['list', 'retrieve'], collections: ['users', 'orders'] },
        { groupName: 'c', resource: 'records', actions: ['update'], collections: null },
        { groupName: 'd', resource: 'structures', actions: ['list'] },
      ]),
    ).toEqual({
      permissions: ['records:update', 'structures:list'],
      collections: { 'records:list': ['orders', 'users'], 'records:retrieve': ['orders', 'users'] },
    });
    // An unscoped manage covers every scoped action.
    expect(
      effectivePermissions([
        { groupName: 'a', resource: 'records', actions: ['list'], collections: ['orders'] },
        { groupName: 'b', resource: 'records', actions: ['manage'] },
      ]),
    ).toEqual({ permissions: ['records:manage'], collections: {} });
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
