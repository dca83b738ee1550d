import { describe, expect, it } from '@jest/globals';
import { deliveryIdOf } from './delivery-id.js';

describe('deliveryIdOf', () => {
  it('is the webhook-id of a Standard Webhooks arrival, and nothing for any other', () => {
    expect(deliveryIdOf('standard-webhooks', 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W')).toBe(
      'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
    );
    expect(deliveryIdOf('hmac-sha256', 'msg_1')).toBeNull();
    expect(deliveryIdOf(undefined, 'msg_1')).toBeNull();
    expect(deliveryIdOf('standard-webhooks', undefined)).toBeNull();
    expect(deliveryIdOf('standard-webhooks', '')).toBeNull();
    expect(deliveryIdOf('standard-webhooks', ['msg_1', 'msg_2'])).toBeNull();
  });

  it('keeps a long id as its SHA-256: bounded, and still one per id', () => {
    const long = deliveryIdOf('standard-webhooks', 'x'.repeat(5000))!;
    expect(long).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(deliveryIdOf('standard-webhooks', 'x'.repeat(5000))).toBe(long);
    expect(deliveryIdOf('standard-webhooks', 'x'.repeat(5001))).not.toBe(long);
    expect(deliveryIdOf('standard-webhooks', 'y'.repeat(200))).toBe('y'.repeat(200));
  });
});
