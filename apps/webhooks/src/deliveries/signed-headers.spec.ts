import { describe, expect, it } from '@jest/globals';
import { generateWebhookSecret, verifyWebhook } from '@strata/crypto';
import { signedHeaders } from './signed-headers.js';

const current = generateWebhookSecret();
const previous = generateWebhookSecret();
const attempt = {
  deliveryId: '6f1c1d3e-2b4a-4c1e-9a51-6f0f6a0d2b11',
  event: 'record_created',
  attempt: 1,
  isTest: false,
  secrets: [current],
  body: '{"event":"record_created"}',
  nowSeconds: 1_790_000_000,
};

describe('signed headers of an attempt', () => {
  it('carries both header families with identical values and a verifiable signature', () => {
    const h = signedHeaders(attempt);
    expect(h['webhook-id']).toBe(attempt.deliveryId);
    expect(h['Svc-Id']).toBe(h['webhook-id']);
    expect(h['webhook-timestamp']).toBe('1790000000');
    expect(h['Svc-Timestamp']).toBe(h['webhook-timestamp']);
    expect(h['Svc-Signature']).toBe(h['webhook-signature']);
    expect(h['Svc-Event-Type']).toBe('record_created');
    expect(h['content-type']).toBe('application/json');
    const verified = verifyWebhook(
      current,
      { id: h['webhook-id']!, timestamp: h['webhook-timestamp']!, signature: h['webhook-signature']! },
      attempt.body,
      attempt.nowSeconds,
    );
    expect(verified).toEqual({ valid: true });
  });

  it('adds Svc-Retry-Attempt only from the second attempt, and Svc-Test-Event only on tests', () => {
    expect(signedHeaders(attempt)).not.toHaveProperty('Svc-Retry-Attempt');
    expect(signedHeaders(attempt)).not.toHaveProperty('Svc-Test-Event');
    expect(signedHeaders({ ...attempt, attempt: 3 })['Svc-Retry-Attempt']).toBe('3');
    expect(signedHeaders({ ...attempt, isTest: true })['Svc-Test-Event']).toBe('true');
  });

  it('signs with both secrets during a rotation, each verifying on its own', () => {
    const h = signedHeaders({ ...attempt, secrets: [current, previous] });
    const entries = h['webhook-signature']!.split(' ');
    expect(entries).toHaveLength(2);
    for (const secret of [current, previous]) {
      const headers = {
        id: attempt.deliveryId,
        timestamp: h['webhook-timestamp']!,
        signature: h['webhook-signature']!,
      };
      expect(verifyWebhook(secret, headers, attempt.body, attempt.nowSeconds)).toEqual({ valid: true });
    }
    const stranger = generateWebhookSecret();
    const headers = { id: attempt.deliveryId, timestamp: h['webhook-timestamp']!, signature: h['webhook-signature']! };
    expect(verifyWebhook(stranger, headers, attempt.body, attempt.nowSeconds).valid).toBe(false);
  });

  it('keeps webhook-id across attempts while the timestamp and signature follow the clock', () => {
    const first = signedHeaders(attempt);
    const later = signedHeaders({ ...attempt, attempt: 2, nowSeconds: attempt.nowSeconds + 30 });
    expect(later['webhook-id']).toBe(first['webhook-id']);
    expect(later['webhook-timestamp']).not.toBe(first['webhook-timestamp']);
    expect(later['webhook-signature']).not.toBe(first['webhook-signature']);
  });
});
