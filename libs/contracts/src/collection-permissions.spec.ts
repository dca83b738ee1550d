import { describe, expect, it } from '@jest/globals';
import { permitsAnywhere, permitsOnCollection } from './permissions.js';

describe('permissions scoped to collections', () => {
  const none = new Set<string>();

  it('allows an unscoped grant on every collection', () => {
    expect(permitsOnCollection(new Set(['records:list']), {}, 'list', 'orders')).toBe(true);
    expect(permitsOnCollection(new Set(['records:manage']), {}, 'delete', 'orders')).toBe(true);
    expect(permitsOnCollection(new Set(['*']), {}, 'create', 'orders')).toBe(true);
    expect(permitsOnCollection(new Set(['records:list']), {}, 'retrieve', 'orders')).toBe(false);
  });

  it('allows a scoped grant on the collections it names only', () => {
    const scoped = { 'records:list': ['orders'], 'records:manage': ['users'] };
    expect(permitsOnCollection(none, scoped, 'list', 'orders')).toBe(true);
    expect(permitsOnCollection(none, scoped, 'list', 'invoices')).toBe(false);
    expect(permitsOnCollection(none, scoped, 'retrieve', 'orders')).toBe(false);
    // Scoped manage: every action on its collections.
    expect(permitsOnCollection(none, scoped, 'delete', 'users')).toBe(true);
    expect(permitsOnCollection(none, scoped, 'delete', 'orders')).toBe(false);
  });

  it('passes a route check when the permission is held on any collection', () => {
    expect(permitsAnywhere(none, { 'records:list': ['orders'] }, 'records', 'list')).toBe(true);
    expect(permitsAnywhere(none, { 'records:manage': ['orders'] }, 'records', 'create')).toBe(true);
    expect(permitsAnywhere(none, { 'records:list': ['orders'] }, 'records', 'create')).toBe(false);
    expect(permitsAnywhere(none, { 'records:list': [] }, 'records', 'list')).toBe(false);
    expect(permitsAnywhere(new Set(['structures:list']), {}, 'structures', 'list')).toBe(true);
  });
});
