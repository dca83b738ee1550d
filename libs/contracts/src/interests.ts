import { RECORD_EVENTS_MAX_AGE_MS } from './events.js';
import { isWorkspaceSlug } from './ids.js';

/**
 * Record-event interests (docs/events.md, "Routed events"): each record-event
 * consumer (webhooks, compute, orchestration, the services to come) tells the
 * data service which workspaces and collections it has a reason to handle; the
 * outbox relay then also publishes each event to every interested consumer's
 * own subject on the routed stream, and to nobody else.
 */

/** A consumer's name: the token of its routed subjects and durable. */
export const EVENT_CONSUMER_NAME = /^[a-z][a-z0-9_]{0,39}$/;
/** `recordSlug` of an interest in every collection of a workspace. */
export const EVERY_COLLECTION = '*';
/** At most this many interests in one request (a consumer with more sends several `add`s, or a `replace` per workspace). */
export const MAX_INTERESTS_PER_REQUEST = 10_000;
const MAX_RECORD_SLUG_LENGTH = 128;

export interface EventInterest {
  readonly workspaceSlug: string;
  /** A collection's slug, or `*` for every collection of the workspace. */
  readonly recordSlug: string;
}

/**
 * `<p>.data.event-interests.<consumer>.add`: makes the rows exist (a union); answered after they
 * committed. The consumer is in the subject, so a service's NATS user may change its own interests alone.
 */
export interface AddEventInterestsRequest {
  readonly consumer: string;
  readonly interests: readonly EventInterest[];
}

/**
 * `<p>.data.event-interests.<consumer>.replace`: the consumer's interests in `workspaceSlug`
 * (in every workspace when it is absent) become exactly `interests`; answered after commit.
 */
export interface ReplaceEventInterestsRequest {
  readonly consumer: string;
  readonly workspaceSlug?: string;
  readonly interests: readonly EventInterest[];
}

export type EventInterestsReply = { readonly ok: true; readonly count: number } | { readonly error: string };

/** `consumer` `*`: the data service's subscription to every consumer's. */
export function eventInterestsAddSubject(prefix: string, consumer: string): string {
  return `${prefix}.data.event-interests.${consumer}.add`;
}

export function eventInterestsReplaceSubject(prefix: string, consumer: string): string {
  return `${prefix}.data.event-interests.${consumer}.replace`;
}

/** The consumer named by an interests subject (its last token but one). */
export function consumerOfInterestsSubject(subject: string): string | undefined {
  const parts = subject.split('.');
  return parts.length >= 2 ? parts[parts.length - 2] : undefined;
}

/** The stream of routed copies of the record events, one subject per interested consumer; the data service owns it. */
export function routedRecordEventsStream(prefix: string): { name: string; subjects: string[]; maxAgeMs: number } {
  return { name: `${prefix}_routed_records`, subjects: [`${prefix}.routed.>`], maxAgeMs: RECORD_EVENTS_MAX_AGE_MS };
}

/** `<p>.routed.<consumer>.<workspace>.<recordSlug>.<event>`. */
export function routedRecordEventSubject(prefix: string, consumer: string, recordSubject: string): string {
  const tail = recordSubject.slice(`${prefix}.records.`.length);
  return `${prefix}.routed.${consumer}.${tail}`;
}

/** Every routed event of one consumer: the filter of its durable. */
export function routedRecordEventsFilter(prefix: string, consumer: string): string {
  return `${prefix}.routed.${consumer}.>`;
}

/** The durable a consumer reads its routed events with (not `<p>_<consumer>`, which the legacy durables on `<p>_records` used). */
export function routedDurableName(prefix: string, consumer: string): string {
  return `${prefix}_routed_${consumer}`;
}

/**
 * The message id of a routed copy: `<eventId>.<consumer>`, so that a re-publish after
 * a crash is dropped like the event's own. The header `Strata-Event-Id` carries the event id.
 */
export function routedMessageId(eventId: string, consumer: string): string {
  return `${eventId}.${consumer}`;
}

export const EVENT_ID_HEADER = 'Strata-Event-Id';

/** The workspace and collection of a record-event subject `<p>.records.<ws>.<slug>.<event>`, or undefined. */
export function parseRecordEventSubject(
  prefix: string,
  subject: string,
): { workspaceSlug: string; recordSlug: string; event: string } | undefined {
  const head = `${prefix}.records.`;
  if (!subject.startsWith(head)) return undefined;
  const parts = subject.slice(head.length).split('.');
  if (parts.length !== 3 || parts.some((p) => p === '')) return undefined;
  return { workspaceSlug: parts[0]!, recordSlug: parts[1]!, event: parts[2]! };
}

function isRecordSlugOrEvery(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= MAX_RECORD_SLUG_LENGTH &&
    (value === EVERY_COLLECTION || !/[.*>\s]/.test(value))
  );
}

/** The interests of a request, checked and without repeats; throws a message for the `{error}` answer. */
export function normaliseInterests(value: unknown, workspaceSlug?: string): EventInterest[] {
  if (!Array.isArray(value)) throw new Error('interests must be an array');
  if (value.length > MAX_INTERESTS_PER_REQUEST) throw new Error(`at most ${MAX_INTERESTS_PER_REQUEST} interests`);
  const seen = new Map<string, EventInterest>();
  for (const item of value as unknown[]) {
    const i = item as Partial<Record<keyof EventInterest, unknown>> | null;
    if (typeof i !== 'object' || i === null) throw new Error('an interest must be an object');
    if (typeof i.workspaceSlug !== 'string' || !isWorkspaceSlug(i.workspaceSlug))
      throw new Error('an interest needs a valid workspaceSlug');
    if (!isRecordSlugOrEvery(i.recordSlug)) throw new Error('an interest needs a recordSlug or *');
    if (workspaceSlug !== undefined && i.workspaceSlug !== workspaceSlug)
      throw new Error(`an interest outside workspace ${workspaceSlug}`);
    seen.set(`${i.workspaceSlug} ${i.recordSlug}`, { workspaceSlug: i.workspaceSlug, recordSlug: i.recordSlug });
  }
  return [...seen.values()];
}

/** Checks an `add` request. */
export function parseAddEventInterests(payload: unknown): AddEventInterestsRequest {
  const p = payload as Partial<Record<keyof AddEventInterestsRequest, unknown>> | null;
  if (typeof p !== 'object' || p === null) throw new Error('not an object');
  if (typeof p.consumer !== 'string' || !EVENT_CONSUMER_NAME.test(p.consumer)) throw new Error('invalid consumer');
  return { consumer: p.consumer, interests: normaliseInterests(p.interests) };
}

/** Checks a `replace` request. */
export function parseReplaceEventInterests(payload: unknown): ReplaceEventInterestsRequest {
  const p = payload as Partial<Record<keyof ReplaceEventInterestsRequest, unknown>> | null;
  if (typeof p !== 'object' || p === null) throw new Error('not an object');
  if (typeof p.consumer !== 'string' || !EVENT_CONSUMER_NAME.test(p.consumer)) throw new Error('invalid consumer');
  if (p.workspaceSlug !== undefined && (typeof p.workspaceSlug !== 'string' || !isWorkspaceSlug(p.workspaceSlug)))
    throw new Error('invalid workspaceSlug');
  const workspaceSlug = p.workspaceSlug;
  return {
    consumer: p.consumer,
    ...(workspaceSlug !== undefined ? { workspaceSlug } : {}),
    interests: normaliseInterests(p.interests, workspaceSlug),
  };
}
