import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { checkArrivalSignature, signatureClaimOf, type ArrivalSignatureCheck } from './arrival-signature.js';

const VECTORS = JSON.parse(
  readFileSync(new URL('../test/vectors/standard-webhooks.json', import.meta.url), 'utf8'),
) as {
  vectors: { secret: string; id: string; timestamp: string; payload: string; signature: string }[];
  must_fail: string[];
};

const base = (over: Partial<ArrivalSignatureCheck>): ArrivalSignatureCheck => ({
  validate: true,
  secret: 'shhh',
  headerName: 'x-signature',
  headers: {},
  body: Buffer.from('{"a":1}'),
  nowSeconds: 1_800_000_000,
  toleranceSeconds: 300,
  ...over,
});

describe('Standard Webhooks arrivals', () => {
  const v = VECTORS.vectors[0]!;
  const signed = (signature: string, nowSeconds = Number(v.timestamp)) =>
    checkArrivalSignature(
      base({
        secret: v.secret,
        headers: { 'webhook-id': v.id, 'webhook-timestamp': v.timestamp, 'webhook-signature': signature },
        body: Buffer.from(v.payload),
        nowSeconds,
      }),
    );

  it('verifies the published vector, also among other entries and versions', () => {
    expect(signed(v.signature)).toEqual({ result: 'verified', scheme: 'standard-webhooks' });
    expect(signed(`v2,abc ${v.signature} v1,other`).result).toBe('verified');
  });

  it.each(VECTORS.must_fail)('rejects the must-fail signature %s', (signature) => {
    expect(signed(signature)).toMatchObject({ result: 'rejected', scheme: 'standard-webhooks' });
  });

  it('rejects a stale or future timestamp', () => {
    expect(signed(v.signature, Number(v.timestamp) + 301)).toMatchObject({
      result: 'rejected',
      reason: expect.stringContaining('300 s'),
    });
    expect(signed(v.signature, Number(v.timestamp) - 301).result).toBe('rejected');
    expect(signed(v.signature, Number(v.timestamp) + 300).result).toBe('verified');
  });

  it('rejects a changed body', () => {
    const verdict = checkArrivalSignature(
      base({
        secret: v.secret,
        headers: { 'webhook-id': v.id, 'webhook-timestamp': v.timestamp, 'webhook-signature': v.signature },
        body: Buffer.from(v.payload.replace('2432232314', '2432232315')),
        nowSeconds: Number(v.timestamp),
      }),
    );
    expect(verdict.result).toBe('rejected');
  });
});

describe('plain HMAC-SHA256 arrivals', () => {
  const body = Buffer.from('{"event":"paid"}');
  const digest = createHmac('sha256', 'shhh').update(body).digest();
  const withHeader = (value: string, headerName = 'x-signature') =>
    checkArrivalSignature(base({ body, headerName, headers: { [headerName]: value } }));

  it.each([
    ['hex', digest.toString('hex')],
    ['upper-case hex', digest.toString('hex').toUpperCase()],
    ['sha256= hex (GitHub)', `sha256=${digest.toString('hex')}`],
    ['base64', digest.toString('base64')],
    ['base64url', digest.toString('base64url')],
  ])('verifies %s, answering the verified bytes', (_form, value) => {
    expect(withHeader(value)).toEqual({ result: 'verified', scheme: 'hmac-sha256', mac: digest });
  });

  it('claims one key per signature, whatever its spelling, and per body', () => {
    const claims = [
      digest.toString('hex'),
      digest.toString('hex').toUpperCase(),
      `sha256=${digest.toString('hex')}`,
      `SHA256=${digest.toString('hex')}`,
      digest.toString('base64'),
      digest.toString('base64url'),
      ` ${digest.toString('hex')} `,
    ].map((value) => signatureClaimOf(withHeader(value)));
    expect(new Set(claims)).toEqual(new Set([expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/)]));
    expect(new Set(claims).size).toBe(1);
    // The key is not the signature: what is stored cannot be sent back as one.
    expect(claims[0]).not.toContain(digest.toString('hex'));
    const other = Buffer.from('{"event":"refunded"}');
    const otherMac = createHmac('sha256', 'shhh').update(other).digest('hex');
    const otherClaim = signatureClaimOf(
      checkArrivalSignature(base({ body: other, headers: { 'x-signature': otherMac } })),
    );
    expect(otherClaim).not.toBe(claims[0]);
  });

  it('claims nothing for a rejected, unsigned or Standard Webhooks arrival', () => {
    expect(signatureClaimOf(withHeader('0'.repeat(64)))).toBeNull();
    expect(signatureClaimOf(checkArrivalSignature(base({ validate: false })))).toBeNull();
    expect(signatureClaimOf({ result: 'verified', scheme: 'standard-webhooks' })).toBeNull();
  });

  it('reads the trigger’s own header name', () => {
    expect(withHeader(`sha256=${digest.toString('hex')}`, 'x-hub-signature-256').result).toBe('verified');
  });

  it.each([
    ['a wrong digest', createHmac('sha256', 'other').update(body).digest('hex'), 'does not match'],
    ['a truncated digest', digest.toString('hex').slice(0, 40), 'not a hex or base64'],
    ['garbage', 'not-a-signature', 'not a hex or base64'],
  ])('rejects %s', (_what, value, reason) => {
    expect(withHeader(value)).toMatchObject({ result: 'rejected', reason: expect.stringContaining(reason) });
  });

  it('rejects a missing header, and a trigger without a secret', () => {
    expect(checkArrivalSignature(base({ body }))).toMatchObject({
      result: 'rejected',
      reason: 'x-signature is missing',
    });
    expect(checkArrivalSignature(base({ secret: null }))).toMatchObject({ result: 'rejected' });
  });

  it('answers unsigned when the trigger does not validate, whatever is sent', () => {
    expect(checkArrivalSignature(base({ validate: false, headers: { 'x-signature': 'x' } }))).toEqual({
      result: 'unsigned',
    });
  });
});
