import { describe, expect, it } from '@jest/globals';
import { generateWebhookSecret } from './webhook-signature.js';

describe('generateWebhookSecret', () => {
  it('is whsec_ and 44 characters that base64 and base64url decode to the same 33 bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const secret = generateWebhookSecret();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
      const body = secret.slice('whsec_'.length);
      const plain = Buffer.from(body, 'base64');
      expect(plain).toHaveLength(33);
      expect(Buffer.from(body, 'base64url').equals(plain)).toBe(true);
      seen.add(secret);
    }
    expect(seen.size).toBe(300);
  });
});
