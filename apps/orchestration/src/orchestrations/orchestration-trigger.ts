import {
  BULK_RECORD_EVENTS,
  FAILED_RECORD_EVENTS,
  RECORD_EVENTS,
  recordEventName,
  TRIGGER_PATH,
  type FieldError,
} from '@strata/contracts';
import { checkCronExpression, isTimezone, MAX_INTERVAL_SECONDS, parseDateTime } from '@strata/schedule';
import { requirement } from '@strata/workflow';

export const ORCHESTRATION_TRIGGER_TYPES = ['event-driven', 'scheduled', 'on-demand', 'http-trigger'] as const;
export type OrchestrationTriggerType = (typeof ORCHESTRATION_TRIGGER_TYPES)[number];

const EVENTS: readonly string[] = [...RECORD_EVENTS, ...BULK_RECORD_EVENTS, ...FAILED_RECORD_EVENTS];
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/** A signing secret as stored: sealed with the key ring. */
export interface SealedSecret {
  readonly value: string;
  readonly encrypted: true;
  readonly keyVersion: number;
}

/** An orchestration's trigger, checked (the signing secret in the clear until the service seals it). */
export interface OrchestrationTrigger {
  readonly type: OrchestrationTriggerType;
  readonly eventType?: string;
  readonly structureSlug?: string;
  readonly scheduleType?: 'interval' | 'cron' | 'once';
  /** Seconds (the spec's machine-readable description). */
  readonly interval?: number;
  readonly cronExpression?: string;
  readonly scheduledAt?: string;
  readonly timezone?: string;
  readonly path?: string;
  readonly validateSignature?: boolean;
  readonly signingSecret?: string | SealedSecret;
  readonly signatureHeaderName?: string;
}

const FIELDS: Record<OrchestrationTriggerType, readonly string[]> = {
  'on-demand': ['type'],
  'event-driven': ['type', 'eventType', 'structureSlug'],
  scheduled: ['type', 'scheduleType', 'interval', 'cronExpression', 'scheduledAt', 'timezone'],
  'http-trigger': ['type', 'path', 'validateSignature', 'signingSecret', 'signatureHeaderName'],
};

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSealed = (v: unknown): v is SealedSecret =>
  isObject(v) && v['encrypted'] === true && typeof v['value'] === 'string' && typeof v['keyVersion'] === 'number';

/**
 * Checks an orchestration's trigger, every problem at once (`trigger.interval`):
 * the type's own fields only; event-driven needs a record event and a
 * collection slug; scheduled takes interval (seconds), cron (5 fields, an IANA
 * timezone) or once (a future `scheduledAt`) by the rules of scheduled function
 * triggers (`@strata/schedule`); http-trigger needs a path, and a signing secret
 * when it validates signatures.
 */
export function checkOrchestrationTrigger(
  raw: unknown,
  now: Date,
): { trigger: OrchestrationTrigger } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field: `trigger${field ? `.${field}` : ''}`, message });
  if (!isObject(raw)) return { errors: [{ field: 'trigger', message: requirement(raw, 'an object with a type') }] };
  const type = raw['type'];
  if (!(ORCHESTRATION_TRIGGER_TYPES as readonly unknown[]).includes(type)) {
    add('type', `must be one of ${ORCHESTRATION_TRIGGER_TYPES.join(', ')}`);
    return { errors };
  }
  const kind = type as OrchestrationTriggerType;
  for (const key of Object.keys(raw)) if (!FIELDS[kind].includes(key)) add(key, `is not a field of a ${kind} trigger`);
  const trigger: Record<string, unknown> = { type: kind };
  if (kind === 'event-driven') {
    const eventType = recordEventName(raw['eventType']);
    if (!EVENTS.includes(eventType as string))
      add('eventType', requirement(raw['eventType'], `one of ${EVENTS.join(', ')}`));
    else trigger['eventType'] = eventType;
    const slug = raw['structureSlug'];
    if (typeof slug !== 'string' || slug.length > 100 || !SLUG.test(slug)) {
      add(
        'structureSlug',
        requirement(slug, 'a collection slug (lowercase letters and digits, single hyphens between)'),
      );
    } else trigger['structureSlug'] = slug;
  }
  if (kind === 'scheduled') scheduleFields(raw, now, add, trigger);
  if (kind === 'http-trigger') {
    const path = raw['path'];
    if (typeof path !== 'string' || !TRIGGER_PATH.test(path))
      add('path', requirement(path, '1 to 100 letters, digits, hyphens and underscores'));
    else trigger['path'] = path;
    const validate = raw['validateSignature'] ?? false;
    if (typeof validate !== 'boolean') add('validateSignature', 'must be a boolean');
    else trigger['validateSignature'] = validate;
    const secret = raw['signingSecret'];
    if (secret === undefined) {
      if (validate === true) add('signingSecret', 'is required when validateSignature is true');
    } else if (isSealed(secret) || (typeof secret === 'string' && secret.length > 0 && secret.length <= 1024)) {
      trigger['signingSecret'] = secret;
    } else add('signingSecret', 'must be a secret of 1 to 1024 characters');
    const header = raw['signatureHeaderName'] ?? 'x-signature';
    if (typeof header !== 'string' || !HEADER.test(header)) add('signatureHeaderName', 'must be an HTTP header name');
    else trigger['signatureHeaderName'] = header.toLowerCase();
  }
  return errors.length > 0 ? { errors } : { trigger: trigger as unknown as OrchestrationTrigger };
}

function scheduleFields(raw: Obj, now: Date, add: (f: string, m: string) => void, trigger: Record<string, unknown>) {
  const scheduleType = raw['scheduleType'] ?? 'interval';
  if (scheduleType !== 'interval' && scheduleType !== 'cron' && scheduleType !== 'once') {
    add('scheduleType', 'must be one of interval, cron, once');
    return;
  }
  trigger['scheduleType'] = scheduleType;
  const timezone = raw['timezone'] ?? 'UTC';
  if (!isTimezone(timezone)) add('timezone', 'must be an IANA time zone name such as UTC or Europe/Berlin');
  else if (scheduleType !== 'interval') trigger['timezone'] = timezone;
  if (scheduleType === 'interval') {
    const interval = raw['interval'];
    if (
      typeof interval !== 'number' ||
      !Number.isInteger(interval) ||
      interval < 1 ||
      interval > MAX_INTERVAL_SECONDS
    ) {
      add(
        'interval',
        requirement(interval, `whole seconds from 1 to ${MAX_INTERVAL_SECONDS}`, ' for scheduleType interval'),
      );
    } else trigger['interval'] = interval;
  } else if (scheduleType === 'cron') {
    const cron = checkCronExpression(raw['cronExpression'], now);
    if ('message' in cron) add('cronExpression', cron.message);
    else trigger['cronExpression'] = cron.expression;
  } else {
    const at = raw['scheduledAt'];
    if (typeof at !== 'string') add('scheduledAt', requirement(at, 'an ISO 8601 date-time', ' for scheduleType once'));
    else if (isTimezone(timezone)) {
      const parsed = parseDateTime(at, timezone);
      if ('message' in parsed) add('scheduledAt', parsed.message);
      else if (parsed.instant.getTime() <= now.getTime()) add('scheduledAt', 'must be in the future');
      else trigger['scheduledAt'] = parsed.instant.toISOString();
    }
  }
}
