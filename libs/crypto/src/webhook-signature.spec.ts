import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import {
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
  webhookSignature,
  WEBHOOK_SECRET_PREFIX,
} from './webhook-signature.js';

/** The Standard Webhooks conformance vector (copied from the project's shared vectors). */
const VECTOR = JSON.parse(readFileSync(new URL('../test/vectors/standard-webhooks.json', import.meta.url), 'utf8')) as {
  vectors: { secret: string; id: string; timestamp: string; payload: string; signature: string }[];
  must_fail: string[];
};

describe('webhook signatures', () => {
  it.each(VECTOR.vectors)('match the Standard Webhooks vector ($id)', (v) => {
    expect(webhookSignature(v.secret, v.id, v.timestamp, v.payload)).toBe(v.signature);
    const headers = { id: v.id, timestamp: v.timestamp, signature: v.signature };
    expect(verifyWebhook(v.secret, headers, v.payload, Number(v.timestamp))).toEqual({ valid: true });
  });

  it.each(VECTOR.must_fail)("refuse the vector's bad signature %p", (signature) => {
    const v = VECTOR.vectors[0]!;
    const headers = { id: v.id, timestamp: v.timestamp, signature };
    expect(verifyWebhook(v.secret, headers, v.payload, Number(v.timestamp)).valid).toBe(false);
  });

  it('refuse a changed body, id or timestamp, and a timestamp more than 5 minutes away', () => {
    const v = VECTOR.vectors[0]!;
    const now = Number(v.timestamp);
    const ok = { id: v.id, timestamp: v.timestamp, signature: v.signature };
    expect(verifyWebhook(v.secret, ok, `${v.payload} `, now).valid).toBe(false);
    expect(verifyWebhook(v.secret, { ...ok, id: 'msg_other' }, v.payload, now).valid).toBe(false);
    expect(verifyWebhook(v.secret, ok, v.payload, now + 301)).toEqual({
      valid: false,
      reason: 'timestamp outside the tolerance',
    });
    expect(verifyWebhook(v.secret, ok, v.payload, now - 300).valid).toBe(true);
    expect(verifyWebhook(v.secret, { ...ok, timestamp: '1e9' }, v.payload, now).valid).toBe(false);
  });

  it('sign with every secret during a rotation; a receiver with either secret accepts', () => {
    const [next, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = JSON.stringify({ event: 'record_created' });
    const header = signWebhook([next, previous], 'msg_1', 1_700_000_000, body);
    const parts = header.split(' ');
    expect(parts).toHaveLength(2);
    expect(parts.every((p) => /^v1,[A-Za-z0-9+/]{43}=$/.test(p))).toBe(true);
    for (const secret of [next, previous]) {
      expect(
        verifyWebhook(secret, { id: 'msg_1', timestamp: '1700000000', signature: header }, body, 1_700_000_000),
      ).toEqual({
        valid: true,
      });
    }
    expect(
      verifyWebhook(
        generateWebhookSecret(),
        { id: 'msg_1', timestamp: '1700000000', signature: header },
        body,
        1_700_000_000,
      ).valid,
    ).toBe(false);
  });

  it('make secrets of whsec_ and base64 of 33 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret.startsWith(WEBHOOK_SECRET_PREFIX)).toBe(true);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(33);
    expect(generateWebhookSecret()).not.toBe(secret);
    expect(() => webhookSignature('nope', 'a', 1, '')).toThrow(/whsec_/);
  });

  it('are accepted by an off-the-shelf Standard Webhooks verifier, with either secret of a rotation', () => {
    const [next, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = JSON.stringify({ event: 'record_updated', data: { id: 'r1' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_2',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook([next, previous], 'msg_2', timestamp, body),
    };
    for (const secret of [next, previous]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('skip entries of unknown versions', () => {
    const v = VECTOR.vectors[0]!;
    const headers = { id: v.id, timestamp: v.timestamp, signature: `v2,abc ${v.signature}` };
    expect(verifyWebhook(v.secret, headers, v.payload, Number(v.timestamp)).valid).toBe(true);
  });
});
