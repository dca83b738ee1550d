import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { checkTriggerMetadata, EXECUTION_TYPES, type ExecutionType, TRIGGER_METADATA_FIELDS } from './index.js';

const NOW = new Date('2026-06-15T12:00:00Z');

const FIELD_NAMES = [...new Set(Object.values(TRIGGER_METADATA_FIELDS).flat())];
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** Values that get past the first checks, so that the deeper ones run too. */
const plausible = fc.constantFrom<unknown>(
  'record_created',
  'records_bulk_deleted',
  'orders',
  'interval',
  'cron',
  'once',
  60,
  0,
  1000,
  30000,
  '*/5 * * * *',
  '0 0 30 2 *',
  '0 0 * * 7',
  '2027-03-14T02:30:00',
  '2030-01-01T00:00:00Z',
  'America/New_York',
  'Europe/Berlin',
  'hook',
  true,
  false,
  ['GET', 'POST'],
  ['GET', 'GET'],
  { mode: 'public' },
  { modes: ['public', 'bearer'] },
  { modes: ['hmac', 'apiKey'] },
  { enabled: true, recordSlug: 'orders' },
  { value: 's', encrypt: true },
  { value: 'c', encrypted: true, keyVersion: 1 },
);

const key = fc.oneof(fc.constantFrom(...FIELD_NAMES, ...PROTOTYPE_NAMES), fc.string({ maxLength: 8 }));

/** JSON text of an object, built from entries so that `__proto__` stays an own key once parsed. */
const jsonObjectText = (value: fc.Arbitrary<unknown>): fc.Arbitrary<string> =>
  fc
    .array(fc.tuple(key, value), { maxLength: 8 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);

const leaf = fc.oneof(fc.jsonValue({ maxDepth: 3 }), plausible);
/** A metadata block: its values are JSON, plausible values, or objects built the same way (params, auth, autoPersist). */
const metadataText = jsonObjectText(
  fc.oneof(
    leaf,
    jsonObjectText(leaf).map((t) => JSON.parse(t) as unknown),
    jsonObjectText(jsonObjectText(leaf).map((t) => JSON.parse(t) as unknown)).map((t) => JSON.parse(t) as unknown),
  ),
);
const anyMetadata = fc.oneof(
  metadataText.map((t) => JSON.parse(t) as unknown),
  fc.jsonValue(),
  fc.anything(),
);
const params = fc.dictionary(
  fc.string({ maxLength: 6 }),
  fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.record({ value: fc.jsonValue({ maxDepth: 2 }), encrypt: fc.boolean() }),
    fc.record({
      value: fc.string({ minLength: 1 }),
      encrypted: fc.constant(true),
      keyVersion: fc.integer({ min: 1, max: 9 }),
    }),
  ),
  { maxKeys: 4 },
);
const slug = fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}$/);
const path = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/);
const secret = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.record({ value: fc.string({ minLength: 1, maxLength: 40 }), encrypt: fc.boolean() }),
);
const modes = fc.subarray(['bearer', 'apiKey', 'hmac'], { minLength: 1 });
/** Mostly valid blocks of each type, fields optional: many pass, so idempotence is tested on real output. */
const likelyValid: { [T in ExecutionType]: fc.Arbitrary<Record<string, unknown>> } = {
  'on-demand': fc.record({ params }, { requiredKeys: [] }),
  'event-driven': fc.record({
    event: fc.constantFrom('record_created', 'records_bulk_updated'),
    recordSlug: slug,
    params,
  }),
  scheduled: fc.oneof(
    fc.record(
      { scheduleType: fc.constant('interval'), interval: fc.integer({ min: 1, max: 100000 }), params },
      { requiredKeys: ['interval'] },
    ),
    fc.record(
      {
        scheduleType: fc.constant('cron'),
        cronExpression: fc.constantFrom('*/5 * * * *', ' 0  9 * * 1-5 ', '30 2 * * 0', '0 0 29 2 *'),
        timezone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'utc'),
        params,
      },
      { requiredKeys: ['scheduleType', 'cronExpression'] },
    ),
    fc.record(
      {
        scheduleType: fc.constant('once'),
        scheduledAt: fc
          .date({ min: new Date('2026-06-16T00:00:00Z'), max: new Date('2099-01-01T00:00:00Z'), noInvalidDate: true })
          .map((d) => d.toISOString()),
        timezone: fc.constantFrom('UTC', 'Asia/Kolkata'),
        params,
      },
      { requiredKeys: ['scheduleType', 'scheduledAt'] },
    ),
  ),
  'http-trigger': fc.record(
    {
      path,
      validateSignature: fc.boolean(),
      signingSecret: secret,
      signatureHeaderName: fc.constantFrom('X-Signature', 'stripe-signature'),
      captureRejected: fc.boolean(),
      autoPersist: fc.record({ enabled: fc.boolean(), recordSlug: slug }),
      params,
    },
    { requiredKeys: ['path', 'signingSecret'] },
  ),
  endpoint: fc.record(
    {
      path,
      allowedMethods: fc.subarray(['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], { minLength: 1 }),
      timeoutMs: fc.integer({ min: 1000, max: 30000 }),
      auth: fc.oneof(fc.record({ mode: fc.constantFrom('bearer', 'apiKey', 'hmac', 'public') }), fc.record({ modes })),
      params,
    },
    { requiredKeys: ['path'] },
  ),
};
const typedLikelyValid = fc
  .constantFrom(...EXECUTION_TYPES)
  .chain((type) => likelyValid[type].map((m) => [type, m] as const));

const executionType = fc.oneof(fc.constantFrom(...EXECUTION_TYPES), fc.string() as fc.Arbitrary<ExecutionType>);

describe('checkTriggerMetadata on random input', () => {
  it('never throws, and answers either normalised metadata or well-formed, distinct field errors', () => {
    fc.assert(
      fc.property(executionType, anyMetadata, (type, metadata) => {
        const result = checkTriggerMetadata(type, metadata, NOW);
        expect('metadata' in result !== 'errors' in result).toBe(true);
        if ('errors' in result) {
          expect(result.errors.length).toBeGreaterThan(0);
          for (const e of result.errors) {
            expect(e.field).toMatch(/^(triggerMetadata|executionType)/);
            expect(typeof e.message).toBe('string');
            expect(e.message.length).toBeGreaterThan(0);
          }
          expect(new Set(result.errors.map((e) => e.field)).size).toBe(result.errors.length);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('is idempotent: normalised metadata checks to itself', () => {
    fc.assert(
      fc.property(fc.constantFrom(...EXECUTION_TYPES), metadataText, (type, text) => {
        const first = checkTriggerMetadata(type, JSON.parse(text), NOW);
        if ('metadata' in first) {
          // Through JSON, as it is stored and sent back.
          expect(checkTriggerMetadata(type, JSON.parse(JSON.stringify(first.metadata)), NOW)).toEqual(first);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('is idempotent on mostly valid blocks, and accepts most of them', () => {
    let valid = 0;
    fc.assert(
      fc.property(typedLikelyValid, ([type, metadata]) => {
        const first = checkTriggerMetadata(type, metadata, NOW);
        if ('metadata' in first) {
          valid++;
          expect(checkTriggerMetadata(type, JSON.parse(JSON.stringify(first.metadata)), NOW)).toEqual(first);
        }
      }),
      { numRuns: 2000, seed: 7 },
    );
    expect(valid).toBeGreaterThan(1000);
  });

  it('finds valid blocks among the random ones (the generator reaches past the first checks)', () => {
    let valid = 0;
    fc.assert(
      fc.property(fc.constantFrom(...EXECUTION_TYPES), metadataText, (type, text) => {
        if ('metadata' in checkTriggerMetadata(type, JSON.parse(text), NOW)) valid++;
      }),
      { numRuns: 2000, seed: 42 },
    );
    expect(valid).toBeGreaterThan(20);
  });

  it('pollutes no prototype', () => {
    fc.assert(
      fc.property(fc.constantFrom(...EXECUTION_TYPES), metadataText, (type, text) => {
        checkTriggerMetadata(type, JSON.parse(text), NOW);
        expect(Object.keys(Object.prototype)).toEqual([]);
        expect(({} as Record<string, unknown>).path).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });
});
