import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { signEndpointRequest, signingInput, verifyEndpointSignature } from './endpoint-signature.js';

const secret = 'ses_test-secret';
const now = new Date('2026-11-23T12:00:00Z');
const ts = String(Math.floor(now.getTime() / 1000));
const request = { timestamp: ts, method: 'POST', target: '/endpoints/orders?x=1', body: Buffer.from('{"a":1}') };
const check = (overrides: Partial<Parameters<typeof verifyEndpointSignature>[0]> = {}) =>
  verifyEndpointSignature({
    secret,
    signature: signEndpointRequest(secret, request),
    timestamp: ts,
    method: request.method,
    target: request.target,
    body: request.body,
    now,
    toleranceSeconds: 300,
    ...overrides,
  });

describe('endpoint hmac signatures', () => {
  it('signs `{timestamp}.{METHOD}.{target bytes}:{target}.{body}` with HMAC-SHA256, hex, sha256= prefixed', () => {
    expect(signingInput(request).toString()).toBe(`${ts}.POST.21:/endpoints/orders?x=1.{"a":1}`);
    const hex = createHmac('sha256', secret).update(`${ts}.POST.21:/endpoints/orders?x=1.{"a":1}`).digest('hex');
    expect(signEndpointRequest(secret, request)).toBe(`sha256=${hex}`);
    // The length is the target's UTF-8 bytes, not its characters.
    const accented = signingInput({ ...request, target: '/endpoints/caf\u00e9' });
    expect(accented.toString()).toBe(`${ts}.POST.16:/endpoints/caf\u00e9.{"a":1}`);
  });

  it('gives no two (target, body) pairs one signature: the boundary between them cannot be moved', () => {
    // Before 2026-11-29 both pairs signed `{ts}.POST./endpoints/orders?x=1.a.b`.
    const signed = { ...request, target: '/endpoints/orders?x=1', body: Buffer.from('a.b') };
    const moved = { ...request, target: '/endpoints/orders?x=1.a', body: Buffer.from('b') };
    expect(signingInput(signed).equals(signingInput(moved))).toBe(false);
    expect(check({ signature: signEndpointRequest(secret, signed), target: moved.target, body: moved.body })).toEqual({
      ok: false,
      reason: 'the signature does not match',
    });
    // Any pairs: equal signing inputs only for equal pairs.
    const part = fc.string({ unit: fc.constantFrom('.', ':', '1', 'a', '/', '?', '=', '\u00e9') });
    fc.assert(
      fc.property(part, part, part, part, (t1, b1, t2, b2) => {
        const a = signingInput({ ...request, target: `/endpoints/${t1}`, body: Buffer.from(b1) });
        const b = signingInput({ ...request, target: `/endpoints/${t2}`, body: Buffer.from(b2) });
        return a.equals(b) === (t1 === t2 && b1 === b2);
      }),
      { numRuns: 2000 },
    );
  });

  it('signs only a timestamp of digits and a method name, which no field boundary can hide in', () => {
    expect(() => signingInput({ ...request, method: 'PO.ST' })).toThrow('HTTP method name');
    expect(() => signingInput({ ...request, timestamp: '1.2' })).toThrow('decimal digits');
    expect(check({ method: 'PO.ST' })).toEqual({ ok: false, reason: 'the method cannot be signed' });
  });

  it('accepts the signature as sent, bare hex, and base64, each answering the same bytes (the replay key)', () => {
    const digest = createHmac('sha256', secret).update(signingInput(request)).digest();
    const accepted = { ok: true, mac: digest };
    expect(check()).toEqual(accepted);
    expect(check({ signature: digest.toString('hex') })).toEqual(accepted);
    expect(check({ signature: digest.toString('hex').toUpperCase() })).toEqual(accepted);
    expect(check({ signature: digest.toString('base64') })).toEqual(accepted);
    expect(check({ signature: `sha256=${digest.toString('base64url')}` })).toEqual(accepted);
  });

  it.each([
    ['another body', { body: Buffer.from('{"a":2}') }],
    ['another method', { method: 'PUT' }],
    ['another endpoint', { target: '/endpoints/refunds?x=1' }],
    ['another query', { target: '/endpoints/orders?x=2' }],
    ['another secret', { secret: 'ses_other' }],
  ])('refuses a signature moved to %s', (_what, change) => {
    expect(check(change)).toEqual({ ok: false, reason: 'the signature does not match' });
  });

  it('refuses a timestamp outside the tolerance, either way, and accepts one at its edge', () => {
    const at = (seconds: number) => {
      const timestamp = String(Number(ts) + seconds);
      return check({ timestamp, signature: signEndpointRequest(secret, { ...request, timestamp }) });
    };
    expect(at(300)).toMatchObject({ ok: true });
    expect(at(-300)).toMatchObject({ ok: true });
    expect(at(301)).toMatchObject({ ok: false, reason: expect.stringContaining('300 s') });
    expect(at(-301)).toMatchObject({ ok: false, reason: expect.stringContaining('300 s') });
  });

  it.each([
    ['no signature', { signature: undefined }, 'x-signature is missing'],
    ['no timestamp', { timestamp: undefined }, 'x-signature-timestamp'],
    ['a timestamp in milliseconds written as a date', { timestamp: '2026-11-23' }, 'x-signature-timestamp'],
    ['a truncated signature', { signature: 'sha256=abcd' }, 'must be sha256=<hex>'],
    ['a signature of the wrong length in base64', { signature: Buffer.alloc(31).toString('base64') }, 'must be'],
  ])('refuses %s with a reason', (_what, change, reason) => {
    const verdict = check(change);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.reason).toContain(reason);
  });
});
