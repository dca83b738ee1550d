import { describe, expect, it } from '@jest/globals';
import type { FieldError } from '@strata/contracts';
import {
  checkTriggerMetadata,
  EXECUTION_TYPES,
  type ExecutionType,
  TRIGGER_EVENTS,
  TRIGGER_METADATA_FIELDS,
  type TriggerMetadataCheck,
} from './index.js';

const NOW = new Date('2026-06-15T12:00:00Z');

function ok<T extends ExecutionType>(type: T, metadata: unknown, now = NOW) {
  const result: TriggerMetadataCheck<T> = checkTriggerMetadata(type, metadata, now);
  if ('errors' in result) throw new Error(`expected valid, got ${JSON.stringify(result.errors)}`);
  return result.metadata;
}

function errors(type: ExecutionType, metadata: unknown, now = NOW): FieldError[] {
  const result = checkTriggerMetadata(type, metadata, now);
  if (!('errors' in result)) throw new Error(`expected errors, got ${JSON.stringify(result.metadata)}`);
  return result.errors;
}

/** The one error a body has, as [field, message]. */
function only(type: ExecutionType, metadata: unknown, now = NOW): [string, string] {
  const list = errors(type, metadata, now);
  expect(list).toHaveLength(1);
  return [list[0]!.field, list[0]!.message];
}

/** JSON.parse, so that `__proto__` becomes an own key as it does in a request body. */
const json = (text: string): unknown => JSON.parse(text);

describe('checkTriggerMetadata: the metadata block', () => {
  it('refuses an unknown executionType without throwing', () => {
    expect(errors('cron-job' as ExecutionType, {})).toEqual([
      { field: 'executionType', message: expect.stringContaining('on-demand') },
    ]);
    expect(errors(undefined as unknown as ExecutionType, {})).toEqual([
      { field: 'executionType', message: expect.any(String) },
    ]);
  });

  it.each([undefined, null, {}])('reads %p metadata as an empty block', (metadata) => {
    expect(ok('on-demand', metadata)).toEqual({ params: {} });
  });

  it.each([[[]], ['x'], [7], [true], [new Date(0)], [new Map()]])('refuses %p as the block', (metadata) => {
    expect(only('on-demand', metadata)).toEqual(['triggerMetadata', 'must be an object of on-demand trigger settings']);
  });

  it.each(EXECUTION_TYPES.map((t) => [t, TRIGGER_METADATA_FIELDS[t]] as const))(
    '%s accepts exactly %p',
    (type, fields) => {
      const list = errors(type, { nope: 1, other: 2 }).filter((e) => !e.message.startsWith('is required'));
      expect(list).toEqual([
        {
          field: 'triggerMetadata.nope',
          message: `is not a field of ${type} trigger metadata (accepted: ${fields.join(', ')})`,
        },
        { field: 'triggerMetadata.other', message: expect.stringContaining('is not a field of') },
      ]);
    },
  );

  it.each([
    ['on-demand', { event: 'record_created' }, 'triggerMetadata.event'],
    ['on-demand', { path: 'x' }, 'triggerMetadata.path'],
    ['event-driven', { event: 'record_created', recordSlug: 'a', interval: 5 }, 'triggerMetadata.interval'],
    ['scheduled', { interval: 60, path: 'x' }, 'triggerMetadata.path'],
    ['http-trigger', { path: 'x', allowedMethods: ['GET'] }, 'triggerMetadata.allowedMethods'],
    ['endpoint', { path: 'x', validateSignature: true }, 'triggerMetadata.validateSignature'],
    ['endpoint', { path: 'x', 'odd key': 1 }, 'triggerMetadata["odd key"]'],
  ] as const)('%s refuses a field of another type: %p', (type, metadata, field) => {
    expect(only(type, metadata)[0]).toBe(field);
  });

  it('refuses prototype names as keys, reading own properties only', () => {
    const body = json('{"__proto__": {"path": "x"}, "constructor": 1, "toString": 2, "hasOwnProperty": 3}');
    expect(errors('on-demand', body).map((e) => e.field)).toEqual([
      'triggerMetadata.__proto__',
      'triggerMetadata.constructor',
      'triggerMetadata.toString',
      'triggerMetadata.hasOwnProperty',
    ]);
    // A required field is never found on the prototype.
    expect(errors('endpoint', json('{"__proto__": {"path": "x"}}')).map((e) => e.field)).toEqual([
      'triggerMetadata.__proto__',
      'triggerMetadata.path',
    ]);
    expect(({} as Record<string, unknown>).path).toBeUndefined();
  });

  it('accepts a null-prototype object as a block', () => {
    const body = Object.assign(Object.create(null) as object, { path: 'hook' });
    expect(ok('endpoint', body).path).toBe('hook');
  });

  it('reports an object with a throwing getter instead of throwing', () => {
    const body = {};
    Object.defineProperty(body, 'path', {
      enumerable: true,
      get: () => {
        throw new Error('boom');
      },
    });
    expect(errors('endpoint', body)).toEqual([
      { field: 'triggerMetadata.path', message: expect.stringContaining('is required') },
    ]);
    const proxy = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    );
    expect(errors('endpoint', proxy)).toEqual([{ field: 'triggerMetadata', message: 'could not be read as JSON' }]);
  });
});

describe('params (every type)', () => {
  /** The least metadata of each type. */
  const base: Record<ExecutionType, object> = {
    'on-demand': {},
    'event-driven': { event: 'record_created', recordSlug: 'orders' },
    scheduled: { interval: 60 },
    'http-trigger': { path: 'hook' },
    endpoint: { path: 'hook' },
  };

  it.each(EXECUTION_TYPES)('%s accepts params and defaults it to {}', (type) => {
    expect(ok(type, base[type]).params).toEqual({});
    expect(ok(type, { ...base[type], params: { a: 1, b: [true, null, { c: 'x' }] } }).params).toEqual({
      a: 1,
      b: [true, null, { c: 'x' }],
    });
  });

  it.each([[null], [[]], ['x'], [3]])('refuses params %p', (params) => {
    expect(only('on-demand', { params })).toEqual([
      'triggerMetadata.params',
      'must be an object of static parameters (name: value)',
    ]);
  });

  it('refuses more than 100 parameters and empty names', () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, i]));
    expect(only('on-demand', { params: many })).toEqual(['triggerMetadata.params', 'must have at most 100 parameters']);
    expect(
      ok('on-demand', { params: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, i])) }),
    ).toBeTruthy();
    expect(only('on-demand', { params: { '': 1 } })[0]).toBe('triggerMetadata.params[""]');
    expect(only('on-demand', { params: { ['k'.repeat(201)]: 1 } })[1]).toContain('1 to 200 characters');
  });

  it.each(EXECUTION_TYPES)(
    '%s refuses parameter names starting with # (the signing secret was once sealed as one), one entry each',
    (type) => {
      const params = { '#signingSecret': { value: 'sv1.x', encrypted: true, keyVersion: 1 }, '#a': 1, 'a#': 2, ok: 3 };
      expect(errors(type, { ...base[type], params })).toEqual([
        {
          field: 'triggerMetadata.params["#signingSecret"]',
          message: 'parameter names must not start with # (reserved for the platform)',
        },
        {
          field: 'triggerMetadata.params["#a"]',
          message: 'parameter names must not start with # (reserved for the platform)',
        },
      ]);
    },
  );

  it('refuses a parameter name that is not well-formed Unicode (its binding could not tell it from U+FFFD)', () => {
    expect(only('on-demand', { params: { 'a\uD800': 1 } })).toEqual([
      'triggerMetadata.params["a\\ud800"]',
      'parameter names must be well-formed Unicode (no lone surrogate)',
    ]);
    expect(ok('on-demand', { params: { 'a\uFFFD': 1 } }).params).toEqual({ 'a\uFFFD': 1 });
  });

  it('keeps a __proto__ parameter as an ordinary own key, polluting nothing', () => {
    const meta = ok('on-demand', json('{"params": {"__proto__": {"polluted": true}, "constructor": 1}}'));
    expect(Object.keys(meta.params)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(meta.params)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(meta.params, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['{value, encrypt: true}', { value: 'sk_live_1', encrypt: true }, { value: 'sk_live_1', encrypt: true }],
    [
      'any JSON value to encrypt',
      { value: { user: 'a', pass: 'b' }, encrypt: true },
      { value: { user: 'a', pass: 'b' }, encrypt: true },
    ],
    ['null to encrypt', { value: null, encrypt: true }, { value: null, encrypt: true }],
    ['encrypt: false unwrapped', { value: 'plain', encrypt: false }, 'plain'],
    [
      'the stored form',
      { value: 'sv1.1.abc', encrypted: true, keyVersion: 3 },
      { value: 'sv1.1.abc', encrypted: true, keyVersion: 3 },
    ],
    ['an object without the markers', { value: 1, other: 2 }, { value: 1, other: 2 }],
  ])('accepts %s', (_name, value, expected) => {
    expect(ok('on-demand', { params: { secret: value } }).params).toEqual({ secret: expected });
  });

  it.each([
    [
      'a key beside encrypt',
      { value: 'x', encrypt: true, note: 1 },
      'triggerMetadata.params.secret.note',
      'is not allowed beside encrypt',
    ],
    [
      'encrypt not boolean',
      { value: 'x', encrypt: 'yes' },
      'triggerMetadata.params.secret.encrypt',
      'must be a boolean',
    ],
    ['encrypt without value', { encrypt: true }, 'triggerMetadata.params.secret.value', 'is required beside encrypt'],
    [
      'both markers',
      { value: 'x', encrypt: true, encrypted: true },
      'triggerMetadata.params.secret',
      'has both encrypt and encrypted',
    ],
    [
      'encrypted: false',
      { value: 'x', encrypted: false, keyVersion: 1 },
      'triggerMetadata.params.secret.encrypted',
      'must be true',
    ],
    [
      'ciphertext not a string',
      { value: 5, encrypted: true, keyVersion: 1 },
      'triggerMetadata.params.secret.value',
      'ciphertext',
    ],
    [
      'empty ciphertext',
      { value: '', encrypted: true, keyVersion: 1 },
      'triggerMetadata.params.secret.value',
      'ciphertext',
    ],
    [
      'keyVersion 0',
      { value: 'c', encrypted: true, keyVersion: 0 },
      'triggerMetadata.params.secret.keyVersion',
      'positive integer',
    ],
    [
      'keyVersion 1.5',
      { value: 'c', encrypted: true, keyVersion: 1.5 },
      'triggerMetadata.params.secret.keyVersion',
      'positive integer',
    ],
    [
      'keyVersion as a string',
      { value: 'c', encrypted: true, keyVersion: '1' },
      'triggerMetadata.params.secret.keyVersion',
      'positive integer',
    ],
    [
      'keyVersion missing',
      { value: 'c', encrypted: true },
      'triggerMetadata.params.secret.keyVersion',
      'positive integer',
    ],
    [
      'a key beside encrypted',
      { value: 'c', encrypted: true, keyVersion: 1, iv: 'x' },
      'triggerMetadata.params.secret.iv',
      'is not part of',
    ],
  ])('refuses %s', (_name, value, field, message) => {
    const [f, m] = only('on-demand', { params: { secret: value } });
    expect(f).toBe(field);
    expect(m).toContain(message);
  });

  it('names every bad place in a parameter that is not JSON', () => {
    const deep: Record<string, unknown> = {};
    let cursor = deep;
    for (let i = 0; i < 40; i++) {
      const next: Record<string, unknown> = {};
      cursor.next = next;
      cursor = next;
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(
      errors('on-demand', {
        params: {
          nan: Number.NaN,
          inf: [1, Number.POSITIVE_INFINITY],
          undef: undefined,
          fn: () => 1,
          date: new Date(0),
          big: 1n,
          deep,
          cyclic,
          fine: 'ok',
          sparse: [1, , 3], // eslint-disable-line no-sparse-arrays
          wrapped: { value: Number.NaN, encrypt: true },
        },
      }).map((e) => [e.field, e.message]),
    ).toEqual([
      ['triggerMetadata.params.nan', 'must be a finite number'],
      ['triggerMetadata.params.inf[1]', 'must be a finite number'],
      ['triggerMetadata.params.undef', 'is not a JSON value'],
      ['triggerMetadata.params.fn', 'is not a JSON value'],
      ['triggerMetadata.params.date', 'is not a JSON value'],
      ['triggerMetadata.params.big', 'is not a JSON value'],
      [`triggerMetadata.params.deep${'.next'.repeat(32)}`, 'nests deeper than 32 levels'],
      [`triggerMetadata.params.cyclic${'.self'.repeat(32)}`, 'nests deeper than 32 levels'],
      ['triggerMetadata.params.sparse[1]', 'is not a JSON value'],
      ['triggerMetadata.params.wrapped.value', 'must be a finite number'],
    ]);
  });

  it('copies parameters: the result shares no object with the input', () => {
    const input = { params: { list: [{ a: 1 }], secret: { value: { k: 'v' }, encrypt: true } } };
    const meta = ok('on-demand', input);
    expect(meta.params).toEqual(input.params);
    expect(meta.params.list).not.toBe(input.params.list);
    expect((meta.params.secret as { value: unknown }).value).not.toBe(input.params.secret.value);
  });
});

describe('event-driven', () => {
  it.each(TRIGGER_EVENTS)('accepts the event %s', (event) => {
    expect(ok('event-driven', { event, recordSlug: 'orders' })).toEqual({ event, recordSlug: 'orders', params: {} });
  });

  it('watches the record events, the bulk aggregates and the failures (spec 3 lists them all)', () => {
    expect(TRIGGER_EVENTS).toEqual([
      'record_created',
      'record_updated',
      'record_deleted',
      'record_restored',
      'record_reverted',
      'record_expired',
      'records_bulk_created',
      'records_bulk_updated',
      'records_bulk_deleted',
      'record_created_failed',
      'record_updated_failed',
      'record_deleted_failed',
      'records_bulk_created_failed',
      'records_bulk_updated_failed',
      'records_bulk_deleted_failed',
    ]);
  });

  it.each([
    ['record.created', 'record_created'],
    ['records.bulk_created', 'records_bulk_created'],
    ['record.updated_failed', 'record_updated_failed'],
  ])('accepts the dotted form %s the spec’s records page writes, kept as %s', (event, stored) => {
    expect(ok('event-driven', { event, recordSlug: 'orders' })).toEqual({
      event: stored,
      recordSlug: 'orders',
      params: {},
    });
  });

  it.each([
    ['record_exploded'],
    ['record.exploded'],
    ['RECORD_CREATED'],
    ['record..created'],
    [''],
    [1],
    [null],
    [['record_created']],
  ])('refuses the event %p', (event) => {
    expect(only('event-driven', { event, recordSlug: 'orders' })).toEqual([
      'triggerMetadata.event',
      expect.stringContaining('must be one of record_created, record_updated'),
    ]);
  });

  it.each(['a', '9', 'blog-posts', 'orders-2026', 'a-b-c', 'x'.repeat(100)])(
    'accepts the recordSlug %s',
    (recordSlug) => {
      expect(ok('event-driven', { event: 'record_updated', recordSlug }).recordSlug).toBe(recordSlug);
    },
  );

  it.each([
    ['Orders'],
    ['blog_posts'],
    ['blog--posts'],
    ['-blog'],
    ['blog-'],
    ['a b'],
    [''],
    ['x'.repeat(101)],
    [5],
    [null],
  ])('refuses the recordSlug %p', (recordSlug) => {
    expect(only('event-driven', { event: 'record_updated', recordSlug })).toEqual([
      'triggerMetadata.recordSlug',
      expect.stringContaining('must be a collection slug'),
    ]);
  });

  it('requires event and recordSlug, reporting both at once', () => {
    expect(errors('event-driven', {})).toEqual([
      { field: 'triggerMetadata.event', message: expect.stringMatching(/^is required: one of record_created/) },
      { field: 'triggerMetadata.recordSlug', message: 'is required: the slug of a collection' },
    ]);
  });
});

describe('scheduled', () => {
  it('defaults to scheduleType interval', () => {
    expect(ok('scheduled', { interval: 60 })).toEqual({ scheduleType: 'interval', interval: 60, params: {} });
    expect(errors('scheduled', {})).toEqual([
      { field: 'triggerMetadata.interval', message: 'is required for scheduleType interval: seconds, > 0' },
    ]);
  });

  it.each([1, 60, 3600, 366 * 86400])('accepts the interval %p', (interval) => {
    expect(ok('scheduled', { scheduleType: 'interval', interval })).toEqual({
      scheduleType: 'interval',
      interval,
      params: {},
    });
  });

  it.each([[0], [-5], [1.5], [366 * 86400 + 1], ['60'], [null], [Number.NaN], [Number.POSITIVE_INFINITY], [true]])(
    'refuses the interval %p',
    (interval) => {
      expect(only('scheduled', { interval })).toEqual([
        'triggerMetadata.interval',
        'must be a whole number of seconds from 1 to 31622400 (366 days)',
      ]);
    },
  );

  it.each([['weekly'], ['CRON'], [''], [3], [null]])(
    'refuses the scheduleType %p, still checking each field given',
    (scheduleType) => {
      expect(errors('scheduled', { scheduleType, interval: 0, cronExpression: '* * * * *' })).toEqual([
        { field: 'triggerMetadata.scheduleType', message: 'must be one of interval, cron or once' },
        { field: 'triggerMetadata.interval', message: expect.stringContaining('whole number of seconds') },
      ]);
    },
  );

  it.each([
    [
      'interval',
      { interval: 60, timezone: 'UTC' },
      'triggerMetadata.timezone',
      'is not used by scheduleType interval (it takes interval)',
    ],
    [
      'interval',
      { interval: 60, cronExpression: '* * * * *' },
      'triggerMetadata.cronExpression',
      'is not used by scheduleType interval',
    ],
    [
      'cron',
      { cronExpression: '* * * * *', interval: 60 },
      'triggerMetadata.interval',
      'is not used by scheduleType cron (it takes cronExpression, timezone)',
    ],
    [
      'cron',
      { cronExpression: '* * * * *', scheduledAt: '2030-01-01T00:00:00Z' },
      'triggerMetadata.scheduledAt',
      'is not used by scheduleType cron',
    ],
    [
      'once',
      { scheduledAt: '2030-01-01T00:00:00Z', interval: 60 },
      'triggerMetadata.interval',
      'is not used by scheduleType once (it takes scheduledAt, timezone)',
    ],
    [
      'once',
      { scheduledAt: '2030-01-01T00:00:00Z', cronExpression: '* * * * *' },
      'triggerMetadata.cronExpression',
      'is not used by scheduleType once',
    ],
  ])('%s refuses the fields of other schedule types: %p', (scheduleType, rest, field, message) => {
    const [f, m] = only('scheduled', { scheduleType, ...rest });
    expect(f).toBe(field);
    expect(m).toContain(message);
  });

  it('requires the field of each scheduleType', () => {
    expect(only('scheduled', { scheduleType: 'cron' })).toEqual([
      'triggerMetadata.cronExpression',
      'is required for scheduleType cron: minute hour day-of-month month weekday',
    ]);
    expect(only('scheduled', { scheduleType: 'once' })).toEqual([
      'triggerMetadata.scheduledAt',
      'is required for scheduleType once: an ISO 8601 date-time',
    ]);
  });

  describe('cron', () => {
    it.each([
      ['* * * * *', '* * * * *'],
      ['0 9 * * 1-5', '0 9 * * 1-5'],
      ['*/15 * * * *', '*/15 * * * *'],
      ['0 0 1 1 *', '0 0 1 1 *'],
      ['0 0 29 2 *', '0 0 29 2 *'],
      ['5,35 0-23/2 1-15 */3 0,6', '5,35 0-23/2 1-15 */3 0,6'],
      ['0 12 * * 0', '0 12 * * 0'],
      ['  0   9 *\t* 1  ', '0 9 * * 1'],
      ['00 09 * * 01', '00 09 * * 01'],
    ])('accepts %p as %p, timezone UTC by default', (cronExpression, normalised) => {
      expect(ok('scheduled', { scheduleType: 'cron', cronExpression })).toEqual({
        scheduleType: 'cron',
        cronExpression: normalised,
        timezone: 'UTC',
        params: {},
      });
    });

    it.each([
      ['* * * *', 'must have exactly 5 fields (minute hour day-of-month month weekday), got 4'],
      ['0 * * * * *', 'got 6'],
      ['0 0 0 * * * *', 'got 7'],
      ['', 'got 0'],
      ['@daily', 'nicknames such as @daily are not accepted'],
      ['0 0 * * 7', 'weekday 7 is not accepted: weekdays are 0-6 with Sunday 0'],
      ['0 0 * * 1-7', 'weekday 7 is not accepted'],
      ['0 0 * * 8', 'weekday 8 is out of range 0-6'],
      ['0 0 * * MON', 'weekday field "MON" may use only digits and * , - /'],
      ['0 0 * JAN *', 'month field "JAN" may use only digits'],
      ['0 0 L * *', 'day-of-month field "L"'],
      ['0 0 ? * *', 'day-of-month field "?"'],
      ['0 0 * * 1#2', 'weekday field "1#2"'],
      ['0 0 15W * *', 'day-of-month field "15W"'],
      ['60 * * * *', 'minute 60 is out of range 0-59'],
      ['* 24 * * *', 'hour 24 is out of range 0-23'],
      ['* * 0 * *', 'day-of-month 0 is out of range 1-31'],
      ['* * 32 * *', 'day-of-month 32 is out of range 1-31'],
      ['* * * 0 *', 'month 0 is out of range 1-12'],
      ['* * * 13 *', 'month 13 is out of range 1-12'],
      ['*/0 * * * *', 'is not a valid cron expression: Syntax error, illegal stepping: 0'],
      ['5/5 * * * *', 'is not a valid cron expression: Syntax error, stepping with numeric prefix'],
      ['10-5 * * * *', "is not a valid cron expression: From value is larger than to value: '10-5'"],
      ['0,,1 * * * *', 'is not a valid cron expression'],
      ['- * * * *', 'is not a valid cron expression'],
      ['0 0 30 2 *', 'never matches a date'],
      ['0 0 31 4,6,9,11 *', 'never matches a date'],
      // Every bad field, not only the first.
      [
        '60 24 * JAN 7',
        'minute 60 is out of range 0-59; hour 24 is out of range 0-23; month field "JAN" may use only digits and * , - / (names, ?, L, W and # are not accepted); weekday 7 is not accepted',
      ],
    ])('refuses %p: %s', (cronExpression, message) => {
      const [field, m] = only('scheduled', { scheduleType: 'cron', cronExpression });
      expect(field).toBe('triggerMetadata.cronExpression');
      expect(m).toContain(message);
    });

    it.each([[5], [null], [['0', '0', '*', '*', '*']], ['* '.repeat(101)]])(
      'refuses the non-expression %p',
      (cronExpression) => {
        expect(only('scheduled', { scheduleType: 'cron', cronExpression })[0]).toBe('triggerMetadata.cronExpression');
      },
    );

    it.each([
      'UTC',
      'Europe/Berlin',
      'America/New_York',
      'America/Argentina/Buenos_Aires',
      'Etc/GMT+5',
      'Asia/Kolkata',
      'utc',
    ])('accepts the timezone %s as sent', (timezone) => {
      expect(ok('scheduled', { scheduleType: 'cron', cronExpression: '0 9 * * *', timezone })).toMatchObject({
        timezone,
      });
    });

    it.each([
      ['Mars/Olympus'],
      ['+01:00'],
      ['UTC+1'],
      ['GMT-0:00'],
      ['Europe/'],
      ['/UTC'],
      ['local'],
      [''],
      [7],
      [null],
      ['x'.repeat(65)],
    ])('refuses the timezone %p', (timezone) => {
      expect(only('scheduled', { scheduleType: 'cron', cronExpression: '0 9 * * *', timezone })).toEqual([
        'triggerMetadata.timezone',
        'must be an IANA time zone name such as UTC or Europe/Berlin',
      ]);
    });
  });

  describe('once', () => {
    it.each([
      ['2026-06-15T12:00:01Z', 'UTC', '2026-06-15T12:00:01.000Z'],
      ['2026-06-15T12:00:00.001Z', 'UTC', '2026-06-15T12:00:00.001Z'],
      ['2026-06-15T12:00:00.123456789Z', 'UTC', '2026-06-15T12:00:00.123Z'],
      ['2027-01-01T00:00Z', 'UTC', '2027-01-01T00:00:00.000Z'],
      ['2027-01-01t00:00:00z', 'UTC', '2027-01-01T00:00:00.000Z'],
      ['2027-01-01T09:00:00+02:00', 'UTC', '2027-01-01T07:00:00.000Z'],
      ['2027-01-01T09:00:00-05:30', 'Europe/Berlin', '2027-01-01T14:30:00.000Z'],
      ['2028-02-29T00:00:00Z', 'UTC', '2028-02-29T00:00:00.000Z'],
      ['2027-01-01T09:00:00', 'UTC', '2027-01-01T09:00:00.000Z'],
      ['2027-01-01T09:00:00', 'Europe/Berlin', '2027-01-01T08:00:00.000Z'],
      ['2027-07-01T09:00:00', 'Europe/Berlin', '2027-07-01T07:00:00.000Z'],
      ['2027-07-01T09:00:00', 'America/New_York', '2027-07-01T13:00:00.000Z'],
      ['2027-01-01T00:00:00', 'Asia/Kolkata', '2026-12-31T18:30:00.000Z'],
      // The repeated hour: the first occurrence (daylight time).
      ['2026-11-01T01:30:00', 'America/New_York', '2026-11-01T05:30:00.000Z'],
      ['2026-10-25T02:30:00', 'Europe/Berlin', '2026-10-25T00:30:00.000Z'],
    ])('reads %s in %s as %s', (scheduledAt, timezone, instant) => {
      expect(ok('scheduled', { scheduleType: 'once', scheduledAt, timezone })).toEqual({
        scheduleType: 'once',
        scheduledAt: instant,
        timezone,
        params: {},
      });
    });

    it('defaults the timezone to UTC', () => {
      expect(ok('scheduled', { scheduleType: 'once', scheduledAt: '2027-01-01T09:00:00' })).toMatchObject({
        scheduledAt: '2027-01-01T09:00:00.000Z',
        timezone: 'UTC',
      });
    });

    it.each([
      ['2026-06-15T12:00:00Z', 'must be in the future (now is 2026-06-15T12:00:00.000Z)'],
      ['2026-06-15T11:59:59.999Z', 'must be in the future'],
      ['2020-01-01T00:00:00Z', 'must be in the future'],
      ['2026-06-15T14:00:00+02:00', 'must be in the future'],
      ['2027-01-01', 'must be an ISO 8601 date-time'],
      ['2027-01-01 09:00:00Z', 'must be an ISO 8601 date-time'],
      ['01/01/2027 09:00', 'must be an ISO 8601 date-time'],
      ['tomorrow', 'must be an ISO 8601 date-time'],
      ['2027-1-1T09:00:00Z', 'must be an ISO 8601 date-time'],
      ['2027-01-01T09:00:00+0200', 'must be an ISO 8601 date-time'],
      ['2027-13-01T00:00:00Z', 'month 13 does not exist'],
      ['2027-02-29T00:00:00Z', 'day 29 does not exist in month 02 of 2027'],
      ['2027-04-31T00:00:00Z', 'day 31 does not exist'],
      ['2027-01-00T00:00:00Z', 'day 00 does not exist'],
      ['2027-01-01T24:00:00Z', 'time 24:00:00 does not exist'],
      ['2027-01-01T23:60:00Z', 'does not exist'],
      ['2027-01-01T23:59:60Z', 'does not exist'],
      ['2027-01-01T09:00:00+24:00', 'offset +24:00 does not exist'],
    ])('refuses %s: %s', (scheduledAt, message) => {
      const [field, m] = only('scheduled', { scheduleType: 'once', scheduledAt });
      expect(field).toBe('triggerMetadata.scheduledAt');
      expect(m).toContain(message);
    });

    it.each([
      ['2027-03-14T02:30:00', 'America/New_York'],
      ['2027-03-28T02:00:00', 'Europe/Berlin'],
      ['2027-03-28T02:59:59', 'Europe/Berlin'],
    ])('refuses %s in %s: the clocks skip it', (scheduledAt, timezone) => {
      expect(only('scheduled', { scheduleType: 'once', scheduledAt, timezone })).toEqual([
        'triggerMetadata.scheduledAt',
        `${scheduledAt} does not exist in ${timezone} (the clocks skip it for daylight saving)`,
      ]);
    });

    it('reports only the timezone when a local date-time cannot be placed', () => {
      expect(
        only('scheduled', { scheduleType: 'once', scheduledAt: '2027-01-01T09:00:00', timezone: 'Nowhere/Land' })[0],
      ).toBe('triggerMetadata.timezone');
    });

    it('refuses a scheduledAt that is not a string, and any with an invalid clock', () => {
      expect(only('scheduled', { scheduleType: 'once', scheduledAt: 1893456000000 })).toEqual([
        'triggerMetadata.scheduledAt',
        'must be an ISO 8601 date-time string',
      ]);
      expect(
        only('scheduled', { scheduleType: 'once', scheduledAt: '2030-01-01T00:00:00Z' }, new Date(Number.NaN)),
      ).toEqual(['triggerMetadata.scheduledAt', 'must be in the future (now is an invalid date)']);
    });
  });

  it('reports every problem of a scheduled block at once', () => {
    expect(
      errors('scheduled', {
        scheduleType: 'cron',
        cronExpression: '0 0 * * 7',
        timezone: 'Nowhere',
        interval: 5,
        extra: true,
        params: [],
      }).map((e) => e.field),
    ).toEqual([
      'triggerMetadata.extra',
      'triggerMetadata.params',
      'triggerMetadata.interval',
      'triggerMetadata.timezone',
      'triggerMetadata.cronExpression',
    ]);
  });
});

describe('http-trigger', () => {
  it('applies the defaults', () => {
    expect(ok('http-trigger', { path: 'stripe' })).toEqual({
      path: 'stripe',
      validateSignature: false,
      signatureHeaderName: 'x-signature',
      captureRejected: false,
      params: {},
    });
    expect(ok('http-trigger', { path: 'stripe', captureRejected: true }).captureRejected).toBe(true);
    expect(only('http-trigger', { path: 'stripe', captureRejected: 'yes' })).toEqual([
      'triggerMetadata.captureRejected',
      'must be a boolean',
    ]);
  });

  it.each(['a', 'stripe-events', 'Stripe_Events_2', 'x'.repeat(100), '-_-'])('accepts the path %s', (path) => {
    expect(ok('http-trigger', { path }).path).toBe(path);
    expect(ok('endpoint', { path }).path).toBe(path);
  });

  it.each([[''], ['/stripe'], ['a/b'], ['a b'], ['a.b'], ['é'], ['x'.repeat(101)], ['a?b'], [3], [null]])(
    'refuses the path %p (http-trigger and endpoint alike)',
    (path) => {
      for (const type of ['http-trigger', 'endpoint'] as const) {
        expect(only(type, { path })).toEqual([
          'triggerMetadata.path',
          'must be 1 to 100 letters, digits, hyphens and underscores (no slashes)',
        ]);
      }
    },
  );

  it('requires the path', () => {
    expect(only('http-trigger', {})).toEqual([
      'triggerMetadata.path',
      'is required: letters, digits, hyphens and underscores, 1 to 100 characters',
    ]);
  });

  it.each([
    ['a plain secret', 'whsec_abc', 'whsec_abc'],
    ['a secret to encrypt', { value: 'whsec_abc', encrypt: true }, { value: 'whsec_abc', encrypt: true }],
    ['{value, encrypt: false}, unwrapped', { value: 'whsec_abc', encrypt: false }, 'whsec_abc'],
    [
      'the stored form',
      { value: 'sv1.2.x', encrypted: true, keyVersion: 2 },
      { value: 'sv1.2.x', encrypted: true, keyVersion: 2 },
    ],
  ])('accepts %s as signingSecret', (_name, signingSecret, expected) => {
    expect(ok('http-trigger', { path: 'p', validateSignature: true, signingSecret })).toEqual({
      path: 'p',
      validateSignature: true,
      signingSecret: expected,
      signatureHeaderName: 'x-signature',
      captureRejected: false,
      params: {},
    });
  });

  it('keeps a signingSecret while validateSignature is off', () => {
    expect(ok('http-trigger', { path: 'p', signingSecret: 's' })).toMatchObject({
      validateSignature: false,
      signingSecret: 's',
    });
  });

  it.each([
    ['', 'triggerMetadata.signingSecret', 'must be a secret of 1 to 1024 characters'],
    ['x'.repeat(1025), 'triggerMetadata.signingSecret', 'must be a secret of 1 to 1024 characters'],
    [42, 'triggerMetadata.signingSecret', 'must be a secret of 1 to 1024 characters, or {value, encrypt: true}'],
    [['s'], 'triggerMetadata.signingSecret', 'or {value, encrypt: true}'],
    [{ value: 42, encrypt: true }, 'triggerMetadata.signingSecret.value', 'must be a secret of 1 to 1024 characters'],
    [{ value: '', encrypt: false }, 'triggerMetadata.signingSecret.value', 'must be a secret'],
    [{ value: 's', encrypt: true, extra: 1 }, 'triggerMetadata.signingSecret.extra', 'is not allowed beside encrypt'],
    [{ value: 's', encrypted: true }, 'triggerMetadata.signingSecret.keyVersion', 'positive integer'],
    [{ secret: 's' }, 'triggerMetadata.signingSecret', 'or the encrypted form GET returned'],
  ])('refuses the signingSecret %p', (signingSecret, field, message) => {
    const [f, m] = only('http-trigger', { path: 'p', validateSignature: true, signingSecret });
    expect(f).toBe(field);
    expect(m).toContain(message);
  });

  it('requires a signingSecret when validateSignature is true', () => {
    expect(only('http-trigger', { path: 'p', validateSignature: true })).toEqual([
      'triggerMetadata.signingSecret',
      'is required when validateSignature is true',
    ]);
  });

  it.each([['true'], [1], [null]])('refuses validateSignature %p', (validateSignature) => {
    expect(only('http-trigger', { path: 'p', validateSignature })).toEqual([
      'triggerMetadata.validateSignature',
      'must be a boolean',
    ]);
  });

  it.each([
    ['X-Hub-Signature-256', 'x-hub-signature-256'],
    ['stripe-signature', 'stripe-signature'],
    ['X_Custom.Sig', 'x_custom.sig'],
  ])('accepts the header name %s as %s', (signatureHeaderName, expected) => {
    expect(ok('http-trigger', { path: 'p', signatureHeaderName }).signatureHeaderName).toBe(expected);
  });

  it.each([[''], ['X Signature'], ['x-sig:'], ['é'], ['x'.repeat(101)], [5]])(
    'refuses the header name %p',
    (signatureHeaderName) => {
      expect(only('http-trigger', { path: 'p', signatureHeaderName })[0]).toBe('triggerMetadata.signatureHeaderName');
    },
  );

  describe('autoPersist', () => {
    const signed = { path: 'p', validateSignature: true, signingSecret: 's' };

    it('accepts it enabled on a signed trigger, or disabled anywhere', () => {
      expect(
        ok('http-trigger', { ...signed, autoPersist: { enabled: true, recordSlug: 'orders' } }).autoPersist,
      ).toEqual({
        enabled: true,
        recordSlug: 'orders',
      });
      expect(ok('http-trigger', { path: 'p', autoPersist: { enabled: false } }).autoPersist).toEqual({
        enabled: false,
      });
      expect(
        ok('http-trigger', { path: 'p', autoPersist: { enabled: false, recordSlug: 'orders' } }).autoPersist,
      ).toEqual({
        enabled: false,
        recordSlug: 'orders',
      });
      expect(ok('http-trigger', { path: 'p' }).autoPersist).toBeUndefined();
    });

    it.each([
      [
        { path: 'p', autoPersist: { enabled: true, recordSlug: 'orders' } },
        'triggerMetadata.autoPersist.enabled',
        'needs validateSignature: true',
      ],
      [
        { path: 'p', validateSignature: false, signingSecret: 's', autoPersist: { enabled: true, recordSlug: 'o' } },
        'triggerMetadata.autoPersist.enabled',
        'needs validateSignature',
      ],
      [{ ...signed, autoPersist: { enabled: true } }, 'triggerMetadata.autoPersist.recordSlug', 'is required'],
      [
        { ...signed, autoPersist: { enabled: true, recordSlug: 'Orders' } },
        'triggerMetadata.autoPersist.recordSlug',
        'must be a collection slug',
      ],
      [
        { path: 'p', autoPersist: { enabled: false, recordSlug: 'Bad Slug' } },
        'triggerMetadata.autoPersist.recordSlug',
        'must be a collection slug',
      ],
      [
        { ...signed, autoPersist: { recordSlug: 'orders' } },
        'triggerMetadata.autoPersist.enabled',
        'must be a boolean',
      ],
      [
        { ...signed, autoPersist: { enabled: 'yes', recordSlug: 'orders' } },
        'triggerMetadata.autoPersist.enabled',
        'must be a boolean',
      ],
      [
        { ...signed, autoPersist: { enabled: true, recordSlug: 'orders', mode: 'x' } },
        'triggerMetadata.autoPersist.mode',
        'is not a field of autoPersist',
      ],
      [{ ...signed, autoPersist: true }, 'triggerMetadata.autoPersist', 'must be an object {enabled, recordSlug}'],
    ])('refuses %p', (metadata, field, message) => {
      const [f, m] = only('http-trigger', metadata);
      expect(f).toBe(field);
      expect(m).toContain(message);
    });

    it('reports a missing secret and the autoPersist that needs it separately', () => {
      expect(
        errors('http-trigger', { path: 'p', validateSignature: true, autoPersist: { enabled: true, recordSlug: 'o' } }),
      ).toEqual([{ field: 'triggerMetadata.signingSecret', message: 'is required when validateSignature is true' }]);
    });
  });
});

describe('endpoint', () => {
  it('applies the defaults', () => {
    expect(ok('endpoint', { path: 'orders' })).toEqual({
      path: 'orders',
      allowedMethods: ['POST'],
      timeoutMs: 30000,
      auth: { mode: 'bearer' },
      allowCookies: false,
      params: {},
    });
  });

  it('takes allowCookies as a boolean only', () => {
    expect(ok('endpoint', { path: 'p', allowCookies: true }).allowCookies).toBe(true);
    for (const allowCookies of ['true', 1, null, {}]) {
      expect(only('endpoint', { path: 'p', allowCookies })).toEqual([
        'triggerMetadata.allowCookies',
        'must be a boolean',
      ]);
    }
  });

  it.each([[['GET']], [['GET', 'POST', 'PUT', 'DELETE', 'PATCH']], [['PATCH', 'GET']]])(
    'accepts the methods %p in their order',
    (allowedMethods) => {
      expect(ok('endpoint', { path: 'p', allowedMethods }).allowedMethods).toEqual(allowedMethods);
    },
  );

  it.each([
    [
      [],
      'triggerMetadata.allowedMethods',
      'must be a non-empty list of HTTP methods (upper case): GET, POST, PUT, DELETE or PATCH',
    ],
    ['POST', 'triggerMetadata.allowedMethods', 'must be a non-empty list'],
    [null, 'triggerMetadata.allowedMethods', 'must be a non-empty list'],
    [['post'], 'triggerMetadata.allowedMethods[0]', 'must be one of GET, POST, PUT, DELETE or PATCH'],
    [['GET', 'POST', 'HEAD'], 'triggerMetadata.allowedMethods[2]', 'must be one of'],
    [['GET', 'POST', 'GET'], 'triggerMetadata.allowedMethods[2]', 'repeats triggerMetadata.allowedMethods[0]'],
    [['GET', 1], 'triggerMetadata.allowedMethods[1]', 'must be one of'],
    [Array.from({ length: 11 }, () => 'GET'), 'triggerMetadata.allowedMethods', 'at most once'],
  ])('refuses the methods %p', (allowedMethods, field, message) => {
    const [f, m] = only('endpoint', { path: 'p', allowedMethods });
    expect(f).toBe(field);
    expect(m).toContain(message);
  });

  it('reports each bad method on its own', () => {
    expect(errors('endpoint', { path: 'p', allowedMethods: ['GET', 'get', 'GET', 'TRACE'] })).toEqual([
      { field: 'triggerMetadata.allowedMethods[1]', message: 'must be one of GET, POST, PUT, DELETE or PATCH' },
      { field: 'triggerMetadata.allowedMethods[2]', message: 'repeats triggerMetadata.allowedMethods[0]' },
      { field: 'triggerMetadata.allowedMethods[3]', message: 'must be one of GET, POST, PUT, DELETE or PATCH' },
    ]);
  });

  it.each([1000, 1001, 15000, 30000])('accepts timeoutMs %p', (timeoutMs) => {
    expect(ok('endpoint', { path: 'p', timeoutMs }).timeoutMs).toBe(timeoutMs);
  });

  it.each([[999], [30001], [0], [-1], [1500.5], ['5000'], [null], [Number.NaN]])(
    'refuses timeoutMs %p',
    (timeoutMs) => {
      expect(only('endpoint', { path: 'p', timeoutMs })).toEqual([
        'triggerMetadata.timeoutMs',
        'must be a whole number of milliseconds from 1000 to 30000',
      ]);
    },
  );

  it.each([
    [{ mode: 'bearer' }],
    [{ mode: 'apiKey' }],
    [{ mode: 'hmac' }],
    [{ mode: 'public' }],
    [{ modes: ['bearer'] }],
    [{ modes: ['bearer', 'apiKey', 'hmac'] }],
    [{ modes: ['hmac', 'apiKey'] }],
    [{ modes: ['public'] }],
  ])('accepts auth %p as sent', (auth) => {
    expect(ok('endpoint', { path: 'p', auth }).auth).toEqual(auth);
  });

  it.each([
    [{}, 'triggerMetadata.auth', 'needs mode (one of bearer, apiKey, hmac or public) or modes (a list of them)'],
    [{ mode: 'bearer', modes: ['hmac'] }, 'triggerMetadata.auth', 'takes mode or modes, not both'],
    [{ mode: 'basic' }, 'triggerMetadata.auth.mode', 'must be one of bearer, apiKey, hmac or public'],
    [{ mode: 'APIKEY' }, 'triggerMetadata.auth.mode', 'must be one of'],
    [{ mode: null }, 'triggerMetadata.auth.mode', 'must be one of'],
    [{ modes: [] }, 'triggerMetadata.auth.modes', 'must be a non-empty list of auth modes'],
    [{ modes: 'bearer' }, 'triggerMetadata.auth.modes', 'must be a non-empty list'],
    [{ modes: ['bearer', 'jwt'] }, 'triggerMetadata.auth.modes[1]', 'must be one of'],
    [{ modes: ['hmac', 'hmac'] }, 'triggerMetadata.auth.modes[1]', 'repeats triggerMetadata.auth.modes[0]'],
    [{ modes: ['public', 'bearer'] }, 'triggerMetadata.auth.modes', 'public cannot be combined with other modes'],
    [{ modes: ['apiKey', 'public'] }, 'triggerMetadata.auth.modes', 'public cannot be combined'],
    ['bearer', 'triggerMetadata.auth', 'must be {mode} or {modes: [...]}'],
    [null, 'triggerMetadata.auth', 'must be {mode} or {modes: [...]}'],
  ])('refuses auth %p', (auth, field, message) => {
    const [f, m] = only('endpoint', { path: 'p', auth });
    expect(f).toBe(field);
    expect(m).toContain(message);
  });

  it('refuses unknown auth keys one by one', () => {
    expect(errors('endpoint', { path: 'p', auth: { mode: 'apiKey', key: 'k', apiKeyHash: 'h' } })).toEqual([
      { field: 'triggerMetadata.auth.key', message: 'is not a field of auth (accepted: mode, modes)' },
      { field: 'triggerMetadata.auth.apiKeyHash', message: 'is not a field of auth (accepted: mode, modes)' },
    ]);
  });

  it('reports every problem of an endpoint block at once', () => {
    expect(
      errors('endpoint', {
        path: '/orders',
        allowedMethods: ['GET', 'FETCH', 'GET'],
        timeoutMs: 60000,
        auth: { modes: ['public', 'bearer'] },
        params: { key: { value: 'x', encrypt: 1 } },
        retries: 3,
      }),
    ).toEqual([
      {
        field: 'triggerMetadata.retries',
        message: expect.stringContaining('is not a field of endpoint trigger metadata'),
      },
      { field: 'triggerMetadata.params.key.encrypt', message: 'must be a boolean' },
      { field: 'triggerMetadata.path', message: expect.any(String) },
      { field: 'triggerMetadata.allowedMethods[1]', message: expect.any(String) },
      { field: 'triggerMetadata.allowedMethods[2]', message: expect.any(String) },
      { field: 'triggerMetadata.timeoutMs', message: expect.any(String) },
      { field: 'triggerMetadata.auth.modes', message: 'public cannot be combined with other modes' },
    ]);
  });
});
