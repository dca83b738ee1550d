import {
  BULK_RECORD_EVENTS,
  FAILED_RECORD_EVENTS,
  type FieldError,
  RECORD_EVENTS,
  recordEventName,
  TRIGGER_PATH,
} from '@strata/contracts';

export { TRIGGER_PATH };
import {
  checkParamValue,
  checkParams,
  type EncryptRequest,
  type EncryptedParam,
  isEncryptRequest,
  type TriggerParams,
} from './params.js';
import { child, Issues, isPlainObject, oneOf, own, refuseUnknownKeys } from './reading.js';
import {
  checkCronExpression,
  type CronSchedule,
  type IntervalSchedule,
  isTimezone,
  MAX_INTERVAL_SECONDS,
  type OnceSchedule,
  parseDateTime,
} from '@strata/schedule';

export const EXECUTION_TYPES = ['on-demand', 'event-driven', 'scheduled', 'http-trigger', 'endpoint'] as const;
export type ExecutionType = (typeof EXECUTION_TYPES)[number];

/** The record events a trigger can watch: the per-record events, the bulk aggregates and the *_failed events. */
export const TRIGGER_EVENTS = [...RECORD_EVENTS, ...BULK_RECORD_EVENTS, ...FAILED_RECORD_EVENTS] as const;
export type TriggerEventName = (typeof TRIGGER_EVENTS)[number];

export const SCHEDULE_TYPES = ['interval', 'cron', 'once'] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const ENDPOINT_AUTH_MODES = ['bearer', 'apiKey', 'hmac', 'public'] as const;
export type EndpointAuthMode = (typeof ENDPOINT_AUTH_MODES)[number];

/** The fields each type's triggerMetadata accepts; any other key is refused. */
export const TRIGGER_METADATA_FIELDS = {
  'on-demand': ['params'],
  'event-driven': ['event', 'recordSlug', 'params'],
  scheduled: ['scheduleType', 'interval', 'cronExpression', 'scheduledAt', 'timezone', 'params'],
  'http-trigger': [
    'path',
    'validateSignature',
    'signingSecret',
    'signatureHeaderName',
    'captureRejected',
    'autoPersist',
    'params',
  ],
  endpoint: ['path', 'allowedMethods', 'timeoutMs', 'auth', 'allowCookies', 'params'],
} as const satisfies Record<ExecutionType, readonly string[]>;

/** The schedule fields each scheduleType takes (params aside); the others are refused. */
export const SCHEDULE_FIELDS = {
  interval: ['interval'],
  cron: ['cronExpression', 'timezone'],
  once: ['scheduledAt', 'timezone'],
} as const satisfies Record<ScheduleType, readonly string[]>;

/** The collection slug rule of the data service (apps/data RECORD_SLUG): lowercase letters and digits, single hyphens between. */
export const RECORD_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const MAX_RECORD_SLUG_LENGTH = 100;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
export const MAX_SIGNING_SECRET_LENGTH = 1024;

export const DEFAULT_TIMEZONE = 'UTC';
export const DEFAULT_SIGNATURE_HEADER = 'x-signature';
export const DEFAULT_ALLOWED_METHODS: readonly HttpMethod[] = ['POST'];
export const MIN_TIMEOUT_MS = 1000;
export const MAX_TIMEOUT_MS = 30_000;
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface OnDemandMetadata {
  params: TriggerParams;
}

export interface EventDrivenMetadata {
  event: TriggerEventName;
  recordSlug: string;
  params: TriggerParams;
}

export type ScheduledMetadata = (IntervalSchedule | CronSchedule | OnceSchedule) & { params: TriggerParams };

/** A signing secret: plain, to be encrypted by the caller, or already encrypted (as GET returns it). */
export type SigningSecret = string | (EncryptRequest & { value: string }) | EncryptedParam;

export interface AutoPersist {
  enabled: boolean;
  /** Required when enabled. */
  recordSlug?: string;
}

export interface HttpTriggerMetadata {
  path: string;
  validateSignature: boolean;
  signingSecret?: SigningSecret;
  /** Lower case. */
  signatureHeaderName: string;
  /** Whether arrivals whose signature does not verify are kept (as `rejected`, never dispatched). */
  captureRejected: boolean;
  autoPersist?: AutoPersist;
  params: TriggerParams;
}

/** One mode, or a list of which any one succeeds; kept in the shape it was sent in. */
export type EndpointAuth = { mode: EndpointAuthMode } | { modes: EndpointAuthMode[] };

export interface EndpointMetadata {
  path: string;
  allowedMethods: HttpMethod[];
  timeoutMs: number;
  auth: EndpointAuth;
  /**
   * Whether the function's `Set-Cookie` reaches the caller: host-only, kept to the
   * workspace's endpoints (docs/compute.md, "What an endpoint may answer"). Default false.
   */
  allowCookies: boolean;
  params: TriggerParams;
}

export interface TriggerMetadataByType {
  'on-demand': OnDemandMetadata;
  'event-driven': EventDrivenMetadata;
  scheduled: ScheduledMetadata;
  'http-trigger': HttpTriggerMetadata;
  endpoint: EndpointMetadata;
}

export type TriggerMetadataFor<T extends ExecutionType> = TriggerMetadataByType[T];
export type TriggerMetadata = TriggerMetadataByType[ExecutionType];

export type TriggerMetadataCheck<T extends ExecutionType = ExecutionType> =
  { metadata: TriggerMetadataFor<T> } | { errors: FieldError[] };

const ROOT = 'triggerMetadata';

/**
 * Checks a trigger's `triggerMetadata` against its `executionType` and returns
 * it normalised (defaults applied, `{value, encrypt: false}` unwrapped), or
 * every problem at once, one entry per bad field (`triggerMetadata.interval`,
 * `triggerMetadata.allowedMethods[2]`). Absent or null metadata is `{}`.
 * Pure: no I/O, `now` is the clock; never throws.
 */
export function checkTriggerMetadata<T extends ExecutionType>(
  type: T,
  metadata: unknown,
  now: Date,
): TriggerMetadataCheck<T> {
  try {
    if (!(EXECUTION_TYPES as readonly unknown[]).includes(type)) {
      return { errors: [{ field: 'executionType', message: `must be one of ${oneOf(EXECUTION_TYPES)}` }] };
    }
    const body = metadata === undefined || metadata === null ? {} : metadata;
    if (!isPlainObject(body)) {
      return { errors: [{ field: ROOT, message: `must be an object of ${type} trigger settings` }] };
    }
    const issues = new Issues();
    refuseUnknownKeys(body, TRIGGER_METADATA_FIELDS[type], ROOT, issues, `${type} trigger metadata`);
    const params = checkParams(own(body, 'params'), `${ROOT}.params`, issues);
    const check: Check<TriggerMetadata> = CHECKS[type];
    const checked = check(body, issues, now);
    if (issues.count > 0 || checked === undefined || params === undefined) {
      return { errors: issues.count > 0 ? issues.list : [{ field: ROOT, message: 'is not valid' }] };
    }
    const normalised: TriggerMetadata = { ...checked, params };
    return { metadata: normalised as TriggerMetadataFor<T> };
  } catch {
    // Only an exotic object (a proxy, a throwing getter) gets here: request bodies are parsed JSON.
    return { errors: [{ field: ROOT, message: 'could not be read as JSON' }] };
  }
}

type WithoutParams<M> = M extends unknown ? Omit<M, 'params'> : never;
type Check<M> = (body: Record<string, unknown>, issues: Issues, now: Date) => WithoutParams<M> | undefined;

const CHECKS: { [T in ExecutionType]: Check<TriggerMetadataByType[T]> } = {
  'on-demand': () => ({}),
  'event-driven': checkEventDriven,
  scheduled: checkScheduled,
  'http-trigger': checkHttpTrigger,
  endpoint: checkEndpoint,
};

function checkRecordSlug(value: unknown, path: string, issues: Issues): string | undefined {
  if (value === undefined) {
    issues.add(path, 'is required: the slug of a collection');
  } else if (typeof value !== 'string' || value.length > MAX_RECORD_SLUG_LENGTH || !RECORD_SLUG.test(value)) {
    issues.add(
      path,
      `must be a collection slug: lowercase letters and digits separated by single hyphens, at most ${MAX_RECORD_SLUG_LENGTH} characters`,
    );
  } else {
    return value;
  }
  return undefined;
}

function checkEventDriven(
  body: Record<string, unknown>,
  issues: Issues,
): WithoutParams<EventDrivenMetadata> | undefined {
  // The dotted form the spec's records page writes (`record.created`) is the same event, kept as its underscore name.
  const event = recordEventName(own(body, 'event'));
  if (event === undefined) issues.add(`${ROOT}.event`, `is required: one of ${oneOf(TRIGGER_EVENTS)}`);
  else if (!(TRIGGER_EVENTS as readonly unknown[]).includes(event)) {
    issues.add(`${ROOT}.event`, `must be one of ${oneOf(TRIGGER_EVENTS)}`);
  }
  const recordSlug = checkRecordSlug(own(body, 'recordSlug'), `${ROOT}.recordSlug`, issues);
  if (recordSlug === undefined || !(TRIGGER_EVENTS as readonly unknown[]).includes(event)) return undefined;
  return { event: event as TriggerEventName, recordSlug };
}

function checkScheduled(
  body: Record<string, unknown>,
  issues: Issues,
  now: Date,
): WithoutParams<ScheduledMetadata> | undefined {
  const rawType = own(body, 'scheduleType');
  const scheduleType = rawType === undefined ? 'interval' : rawType;
  const known = (SCHEDULE_TYPES as readonly unknown[]).includes(scheduleType);
  if (!known) issues.add(`${ROOT}.scheduleType`, `must be one of ${oneOf(SCHEDULE_TYPES)}`);
  const takes: readonly string[] = known ? SCHEDULE_FIELDS[scheduleType as ScheduleType] : [];
  if (known) {
    for (const field of ['interval', 'cronExpression', 'scheduledAt', 'timezone'] as const) {
      if (own(body, field) !== undefined && !takes.includes(field)) {
        issues.add(
          `${ROOT}.${field}`,
          `is not used by scheduleType ${scheduleType as string} (it takes ${takes.join(', ')})`,
        );
      }
    }
  }
  // Each field present is checked for its own form even when scheduleType is wrong; requiredness only when it is right.
  const required = (field: string): boolean => known && takes.includes(field);

  let interval: number | undefined;
  const rawInterval = own(body, 'interval');
  if (rawInterval === undefined) {
    if (required('interval')) issues.add(`${ROOT}.interval`, 'is required for scheduleType interval: seconds, > 0');
  } else if (
    typeof rawInterval !== 'number' ||
    !Number.isInteger(rawInterval) ||
    rawInterval < 1 ||
    rawInterval > MAX_INTERVAL_SECONDS
  ) {
    issues.add(`${ROOT}.interval`, `must be a whole number of seconds from 1 to ${MAX_INTERVAL_SECONDS} (366 days)`);
  } else {
    interval = rawInterval;
  }

  let timezone: string | undefined = DEFAULT_TIMEZONE;
  const rawTimezone = own(body, 'timezone');
  if (rawTimezone !== undefined) {
    timezone = isTimezone(rawTimezone) ? rawTimezone : undefined;
    if (timezone === undefined) {
      issues.add(`${ROOT}.timezone`, 'must be an IANA time zone name such as UTC or Europe/Berlin');
    }
  }

  let cronExpression: string | undefined;
  const rawCron = own(body, 'cronExpression');
  if (rawCron === undefined) {
    if (required('cronExpression')) {
      issues.add(`${ROOT}.cronExpression`, 'is required for scheduleType cron: minute hour day-of-month month weekday');
    }
  } else {
    const cron = checkCronExpression(rawCron, now);
    if ('message' in cron) issues.add(`${ROOT}.cronExpression`, cron.message);
    else cronExpression = cron.expression;
  }

  let scheduledAt: string | undefined;
  const rawAt = own(body, 'scheduledAt');
  if (rawAt === undefined) {
    if (required('scheduledAt'))
      issues.add(`${ROOT}.scheduledAt`, 'is required for scheduleType once: an ISO 8601 date-time');
  } else if (typeof rawAt !== 'string') {
    issues.add(`${ROOT}.scheduledAt`, 'must be an ISO 8601 date-time string');
  } else if (timezone !== undefined) {
    // With a bad timezone a local date-time cannot be placed; the timezone entry says why.
    const at = parseDateTime(rawAt, timezone);
    if ('message' in at) issues.add(`${ROOT}.scheduledAt`, at.message);
    else if (!(at.instant.getTime() > now.getTime())) {
      issues.add(`${ROOT}.scheduledAt`, `must be in the future (now is ${isoOrInvalid(now)})`);
    } else {
      scheduledAt = at.instant.toISOString();
    }
  }

  if (issues.count > 0 || timezone === undefined) return undefined;
  switch (scheduleType as ScheduleType) {
    case 'interval':
      return interval === undefined ? undefined : { scheduleType: 'interval', interval };
    case 'cron':
      return cronExpression === undefined ? undefined : { scheduleType: 'cron', cronExpression, timezone };
    case 'once':
      return scheduledAt === undefined ? undefined : { scheduleType: 'once', scheduledAt, timezone };
  }
}

function isoOrInvalid(date: Date): string {
  return Number.isNaN(date.getTime()) ? 'an invalid date' : date.toISOString();
}

function checkPath(value: unknown, path: string, issues: Issues): string | undefined {
  if (value === undefined)
    issues.add(path, 'is required: letters, digits, hyphens and underscores, 1 to 100 characters');
  else if (typeof value !== 'string' || !TRIGGER_PATH.test(value)) {
    issues.add(path, 'must be 1 to 100 letters, digits, hyphens and underscores (no slashes)');
  } else return value;
  return undefined;
}

function checkHttpTrigger(
  body: Record<string, unknown>,
  issues: Issues,
): WithoutParams<HttpTriggerMetadata> | undefined {
  const path = checkPath(own(body, 'path'), `${ROOT}.path`, issues);

  const rawValidate = own(body, 'validateSignature');
  const validateSignature = rawValidate === undefined ? false : rawValidate;
  if (typeof validateSignature !== 'boolean') issues.add(`${ROOT}.validateSignature`, 'must be a boolean');

  const rawSecret = own(body, 'signingSecret');
  let signingSecret: SigningSecret | undefined;
  if (rawSecret === undefined) {
    if (validateSignature === true) {
      issues.add(`${ROOT}.signingSecret`, 'is required when validateSignature is true');
    }
  } else {
    signingSecret = checkSigningSecret(rawSecret, `${ROOT}.signingSecret`, issues);
  }

  const rawHeader = own(body, 'signatureHeaderName');
  let signatureHeaderName = DEFAULT_SIGNATURE_HEADER;
  if (rawHeader !== undefined) {
    if (typeof rawHeader !== 'string' || !HEADER_NAME.test(rawHeader)) {
      issues.add(`${ROOT}.signatureHeaderName`, 'must be an HTTP header name (letters, digits, hyphens; at most 100)');
    } else {
      signatureHeaderName = rawHeader.toLowerCase();
    }
  }

  const rawCapture = own(body, 'captureRejected');
  const captureRejected = rawCapture === undefined ? false : rawCapture;
  if (typeof captureRejected !== 'boolean') issues.add(`${ROOT}.captureRejected`, 'must be a boolean');

  const rawAutoPersist = own(body, 'autoPersist');
  let autoPersist: AutoPersist | undefined;
  if (rawAutoPersist !== undefined) {
    const at = `${ROOT}.autoPersist`;
    if (!isPlainObject(rawAutoPersist)) {
      issues.add(at, 'must be an object {enabled, recordSlug}');
    } else {
      // collectionId is the link GET answers; sent back it is ignored (the service keeps or makes the link).
      refuseUnknownKeys(rawAutoPersist, ['enabled', 'recordSlug', 'collectionId'], at, issues, 'autoPersist');
      const enabled = own(rawAutoPersist, 'enabled');
      const rawSlug = own(rawAutoPersist, 'recordSlug');
      if (typeof enabled !== 'boolean') issues.add(`${at}.enabled`, 'must be a boolean');
      else if (enabled && validateSignature !== true) {
        issues.add(
          `${at}.enabled`,
          'needs validateSignature: true and a signingSecret (records are written only from signed requests)',
        );
      }
      const recordSlug =
        rawSlug === undefined && enabled !== true ? undefined : checkRecordSlug(rawSlug, `${at}.recordSlug`, issues);
      if (typeof enabled === 'boolean') {
        autoPersist = recordSlug === undefined ? { enabled } : { enabled, recordSlug };
      }
    }
  }

  if (path === undefined || typeof validateSignature !== 'boolean' || typeof captureRejected !== 'boolean') {
    return undefined;
  }
  return {
    path,
    validateSignature,
    ...(signingSecret === undefined ? {} : { signingSecret }),
    signatureHeaderName,
    captureRejected,
    ...(autoPersist === undefined ? {} : { autoPersist }),
  };
}

function checkSigningSecret(value: unknown, path: string, issues: Issues): SigningSecret | undefined {
  const requirement = `a secret of 1 to ${MAX_SIGNING_SECRET_LENGTH} characters`;
  const isSecretText = (text: unknown): text is string =>
    typeof text === 'string' && text.length > 0 && text.length <= MAX_SIGNING_SECRET_LENGTH;
  if (typeof value === 'string') {
    if (isSecretText(value)) return value;
    issues.add(path, `must be ${requirement}`);
    return undefined;
  }
  if (!isPlainObject(value)) {
    issues.add(path, `must be ${requirement}, or {value, encrypt: true}`);
    return undefined;
  }
  const before = issues.count;
  const checked = checkParamValue(value, path, issues);
  if (issues.count !== before || checked === undefined) return undefined;
  if (isEncryptRequest(checked)) {
    if (isSecretText(checked.value)) return { value: checked.value, encrypt: true };
    issues.add(`${path}.value`, `must be ${requirement}`);
    return undefined;
  }
  if (typeof checked === 'string') {
    // {value, encrypt: false}: the plain secret.
    if (isSecretText(checked)) return checked;
    issues.add(`${path}.value`, `must be ${requirement}`);
    return undefined;
  }
  if (isPlainObject(checked) && checked.encrypted === true) return checked as unknown as EncryptedParam;
  issues.add(path, `must be ${requirement}, {value, encrypt: true}, or the encrypted form GET returned`);
  return undefined;
}

function checkEndpoint(body: Record<string, unknown>, issues: Issues): WithoutParams<EndpointMetadata> | undefined {
  const path = checkPath(own(body, 'path'), `${ROOT}.path`, issues);
  const allowedMethods = checkMethods(own(body, 'allowedMethods'), `${ROOT}.allowedMethods`, issues);

  const rawTimeout = own(body, 'timeoutMs');
  const timeoutMs = rawTimeout === undefined ? DEFAULT_TIMEOUT_MS : rawTimeout;
  const timeoutOk =
    typeof timeoutMs === 'number' &&
    Number.isInteger(timeoutMs) &&
    timeoutMs >= MIN_TIMEOUT_MS &&
    timeoutMs <= MAX_TIMEOUT_MS;
  if (!timeoutOk) {
    issues.add(
      `${ROOT}.timeoutMs`,
      `must be a whole number of milliseconds from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`,
    );
  }

  const auth = checkAuth(own(body, 'auth'), `${ROOT}.auth`, issues);

  const rawCookies = own(body, 'allowCookies');
  const allowCookies = rawCookies === undefined ? false : rawCookies;
  if (typeof allowCookies !== 'boolean') issues.add(`${ROOT}.allowCookies`, 'must be a boolean');

  if (
    path === undefined ||
    allowedMethods === undefined ||
    !timeoutOk ||
    auth === undefined ||
    typeof allowCookies !== 'boolean'
  ) {
    return undefined;
  }
  return { path, allowedMethods, timeoutMs, auth, allowCookies };
}

/** A non-empty list of distinct members of `allowed`; each bad element is its own entry. */
function checkList<M extends string>(
  value: unknown,
  allowed: readonly M[],
  path: string,
  issues: Issues,
  what: string,
): M[] | undefined {
  if (!Array.isArray(value) || value.length === 0) {
    issues.add(path, `must be a non-empty list of ${what}: ${oneOf(allowed)}`);
    return undefined;
  }
  if (value.length > allowed.length * 2) {
    issues.add(path, `must list each of ${oneOf(allowed)} at most once`);
    return undefined;
  }
  const before = issues.count;
  const seen = new Map<M, number>();
  const list: M[] = [];
  (value as unknown[]).forEach((item, i) => {
    const at = `${path}[${i}]`;
    const member = allowed.find((m) => m === item);
    if (member === undefined) issues.add(at, `must be one of ${oneOf(allowed)}`);
    else if (seen.has(member)) issues.add(at, `repeats ${path}[${seen.get(member)}]`);
    else {
      seen.set(member, i);
      list.push(member);
    }
  });
  return issues.count === before ? list : undefined;
}

function checkMethods(value: unknown, path: string, issues: Issues): HttpMethod[] | undefined {
  if (value === undefined) return [...DEFAULT_ALLOWED_METHODS];
  return checkList(value, HTTP_METHODS, path, issues, 'HTTP methods (upper case)');
}

function checkAuth(value: unknown, path: string, issues: Issues): EndpointAuth | undefined {
  if (value === undefined) return { mode: 'bearer' };
  if (!isPlainObject(value)) {
    issues.add(path, `must be {mode} or {modes: [...]} with modes among ${oneOf(ENDPOINT_AUTH_MODES)}`);
    return undefined;
  }
  const before = issues.count;
  refuseUnknownKeys(value, ['mode', 'modes'], path, issues, 'auth');
  const mode = own(value, 'mode');
  const modes = own(value, 'modes');
  if (mode !== undefined && modes !== undefined) {
    issues.add(path, 'takes mode or modes, not both');
    return undefined;
  }
  if (mode === undefined && modes === undefined) {
    issues.add(path, `needs mode (one of ${oneOf(ENDPOINT_AUTH_MODES)}) or modes (a list of them)`);
    return undefined;
  }
  if (mode !== undefined) {
    if (!(ENDPOINT_AUTH_MODES as readonly unknown[]).includes(mode)) {
      issues.add(child(path, 'mode'), `must be one of ${oneOf(ENDPOINT_AUTH_MODES)}`);
      return undefined;
    }
    return issues.count === before ? { mode: mode as EndpointAuthMode } : undefined;
  }
  const list = checkList(modes, ENDPOINT_AUTH_MODES, child(path, 'modes'), issues, 'auth modes');
  if (list === undefined) return undefined;
  if (list.length > 1 && list.includes('public')) {
    issues.add(child(path, 'modes'), 'public cannot be combined with other modes');
    return undefined;
  }
  return issues.count === before ? { modes: list } : undefined;
}
