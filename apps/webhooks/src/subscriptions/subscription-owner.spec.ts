import { describe, expect, it } from '@jest/globals';
import { ownerOf } from './subscription.js';

describe('the owner of a subscription', () => {
  it('is the stored type and id', () => {
    expect(ownerOf('ci_abc', 'service_account')).toEqual({ type: 'service_account', id: 'ci_abc' });
    expect(ownerOf('0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11', 'user')).toEqual({
      type: 'user',
      id: '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11',
    });
  });

  it('is read from the id when a row has no type (written before it was stored)', () => {
    expect(ownerOf('ci_functions_acme', null)).toEqual({ type: 'service_account', id: 'ci_functions_acme' });
    expect(ownerOf('0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11', null).type).toBe('user');
    expect(ownerOf('ci_x', 'something else').type).toBe('service_account');
  });
});
