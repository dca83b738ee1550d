/**
 * Record events of the data service, as published on JetStream (see docs/events.md).
 * Payloads are exactly the specification's; the event id travels in the
 * `Nats-Msg-Id` header (consumers deduplicate on it), never in the payload.
 */

export const RECORD_EVENTS = [
  'record_created',
  'record_updated',
  'record_deleted',
  'record_restored',
  'record_reverted',
  'record_expired',
] as const;
export type RecordEventName = (typeof RECORD_EVENTS)[number];

export const BULK_RECORD_EVENTS = ['records_bulk_created', 'records_bulk_updated', 'records_bulk_deleted'] as const;
export type BulkRecordEventName = (typeof BULK_RECORD_EVENTS)[number];

export const FAILED_RECORD_EVENTS = [
  'record_created_failed',
  'record_updated_failed',
  'record_deleted_failed',
  'records_bulk_created_failed',
  'records_bulk_updated_failed',
  'records_bulk_deleted_failed',
] as const;
export type FailedRecordEventName = (typeof FAILED_RECORD_EVENTS)[number];

/**
 * A collection migration's progress (docs/data.md, "Migrations"; payload designed here: the
 * spec names the metadata flags, not the events). Published on the collection's subject like
 * its record events, so a consumer of a collection's events may filter them in or out.
 */
export const MIGRATION_EVENTS = [
  'collection_migration_started',
  'collection_migration_progress',
  'collection_migration_finished',
] as const;
export type MigrationEventName = (typeof MIGRATION_EVENTS)[number];

export type AnyRecordEventName = RecordEventName | BulkRecordEventName | FailedRecordEventName | MigrationEventName;

/**
 * A record event's name in its underscore form: the spec's records and
 * orchestration pages also write dotted forms (`record.created`,
 * `records.bulk_created`), accepted wherever an event is named and stored as
 * the underscore form the events carry. Anything else is returned as it is.
 */
export function recordEventName(name: unknown): unknown {
  return typeof name === 'string' && /^records?\.[a-z_]+$/.test(name) ? name.replace('.', '_') : name;
}

/** The record object carried by per-record events (secret fields masked). */
export interface EventRecord {
  id: string;
  workspaceSlug: string;
  recordSlug: string;
  data: Record<string, unknown>;
  status: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  updatedBy: string;
}

interface PerRecordBase {
  workspaceSlug: string;
  recordSlug: string;
  recordId: string;
  timestamp: string;
}

export interface RecordCreatedEvent extends PerRecordBase {
  event: 'record_created';
  data: EventRecord;
  createdBy: string;
}

export interface RecordUpdatedEvent extends PerRecordBase {
  event: 'record_updated' | 'record_restored' | 'record_reverted';
  data: { before: EventRecord; after: EventRecord };
  updatedBy: string;
}

export interface RecordDeletedEvent extends PerRecordBase {
  event: 'record_deleted' | 'record_expired';
  data: EventRecord;
  deletedBy: string;
}

export type PerRecordEvent = RecordCreatedEvent | RecordUpdatedEvent | RecordDeletedEvent;

/** One event per bulk operation: ids only, no record data. */
export interface BulkRecordEvent {
  event: BulkRecordEventName;
  workspaceSlug: string;
  recordSlug: string;
  structureId: string;
  recordIds: string[];
  count: number;
  timestamp: string;
  createdBy?: string;
  updatedBy?: string;
  deletedBy?: string;
  /** Only on records_bulk_created. */
  schemaDiscoveryMode?: 'strict' | 'auto-evolving' | 'schemaless';
}

/** An operation that did not happen (payload designed here; the spec shows none). */
export interface FailedRecordEvent {
  event: FailedRecordEventName;
  workspaceSlug: string;
  recordSlug: string;
  /** The record concerned, when the operation named one. */
  recordId?: string;
  error: { code: string; message: string };
  timestamp: string;
  createdBy?: string;
  updatedBy?: string;
  deletedBy?: string;
}

/** Counts of a collection migration, as its job answers them. */
export interface MigrationProgress {
  /** Records of the collection when it started (deleted ones included). */
  total: number;
  /** Records checked so far (records created meanwhile are checked too: it may pass `total`). */
  processed: number;
  /** Records whose values the job rewrote. */
  converted: number;
  /** Records that met the new definition as they were. */
  alreadyValid: number;
  /** Records that could not be converted (listed by the job). */
  failed: number;
  /** Records left for later because a client held them: checked again before the end. */
  pending: number;
  /** A cancelled migration: records checked on the way back, put back, and those that could not be. */
  revertProcessed: number;
  reverted: number;
  revertFailed: number;
}

export interface MigrationEvent {
  event: MigrationEventName;
  workspaceSlug: string;
  recordSlug: string;
  structureId: string;
  migrationId: string;
  status: 'running' | 'cancelling' | 'completed' | 'cancelled' | 'failed';
  progress: MigrationProgress;
  timestamp: string;
}

export type RecordEvent = PerRecordEvent | BulkRecordEvent | FailedRecordEvent | MigrationEvent;

/** Stream and subjects: `<prefix>.records.<workspace>.<recordSlug>.<event>`. */
/**
 * How long the records stream keeps an event: no consumer is handed one older than this
 * (what remembers which events it handled may forget them after it).
 */
export const RECORD_EVENTS_MAX_AGE_MS = 7 * 24 * 3_600_000;

export function recordEventsStream(prefix: string): { name: string; subjects: string[]; maxAgeMs: number } {
  return { name: `${prefix}_records`, subjects: [`${prefix}.records.>`], maxAgeMs: RECORD_EVENTS_MAX_AGE_MS };
}

export function recordEventSubject(
  prefix: string,
  workspace: string,
  recordSlug: string,
  event: AnyRecordEventName,
): string {
  return `${prefix}.records.${workspace}.${recordSlug}.${event}`;
}

/**
 * The two work queues of function executions, one message per queued run, both
 * taken by the sandbox workers. `jobs` holds the runs of workspaces with few
 * runs waiting; `backlog` the runs of a workspace that has many waiting
 * already. A worker takes from both, but a backlog job waits for an isolate
 * behind every other job it holds, so one workspace's backlog does not hold
 * up another workspace's runs (docs/compute.md, "Fair share").
 */
export type ComputeJobLane = 'jobs' | 'backlog';

export function computeJobsStream(
  prefix: string,
  lane: ComputeJobLane = 'jobs',
): { name: string; subjects: string[]; retention: 'workqueue' } {
  return { name: `${prefix}_compute_${lane}`, subjects: [`${prefix}.compute.${lane}.>`], retention: 'workqueue' };
}

export function computeJobSubject(prefix: string, workspace: string, lane: ComputeJobLane = 'jobs'): string {
  return `${prefix}.compute.${lane}.${workspace}`;
}

/**
 * A compute job: which run to execute. With `run` (every queued run but a
 * re-run, when it fits in a message) the job also carries the row's columns a worker needs
 * to start it, so the worker reads nothing first and claims the run only when
 * it must (docs/compute.md, "The job pipeline"); the row is still the truth.
 */
export interface ComputeJob {
  readonly runId: string;
  readonly workspaceSlug: string;
  readonly run?: CarriedRun;
}

/**
 * The run of a record event for one trigger is first offered to a worker
 * with a free background isolate over core NATS request/reply on this subject
 * (a queue group): a worker that takes it writes it as running, with its
 * (event, trigger) pair, and starts it at once, without the job queue's hop.
 * A worker that is full, none running, or no answer in time: the API queues
 * the run as usual, and the pair's unique key lets only one of the two start it.
 */
export function computeEventRunSubject(prefix: string): string {
  return `${prefix}.compute.event-runs`;
}

/** The queue group of the workers taking event runs offered to them. */
export function computeEventRunQueue(prefix: string): string {
  return `${prefix}_compute_event_workers`;
}

/** An event's run offered to a worker: the whole run row, and the event it is for. */
export interface EventRunOffer {
  readonly runId: string;
  readonly workspaceSlug: string;
  readonly eventId: string;
  readonly run: CarriedRun;
}

/**
 * A worker's answer to an offer: `started` (it wrote the run and its pair and
 * started it), `known` (the pair started its run before), `busy` (no isolate
 * free, or the run could not be written: the API queues it).
 */
export type EventRunReply = { readonly kind: 'started' } | { readonly kind: 'known' } | { readonly kind: 'busy' };

/**
 * Endpoint runs go to workers over core NATS request/reply on this subject (a
 * queue group: one free worker answers), never through the job queue: a
 * synchronous call must not wait behind queued background jobs, and with no
 * worker free it is refused (503), not queued.
 */
export function computeEndpointSubject(prefix: string): string {
  return `${prefix}.compute.endpoints`;
}

/**
 * A workspace's triggers or functions changed (updated, paused, resumed,
 * deleted): every compute API replica forgets what it keeps of them (the
 * endpoint lookups). Core NATS, no queue group; a lost notice is bounded by the
 * keeping's own time limit.
 */
export function computeTriggersChangedSubject(prefix: string): string {
  return `${prefix}.compute.triggers.changed`;
}

/** What a replica says when a workspace's triggers or functions changed. */
export interface TriggersChanged {
  readonly workspaceSlug: string;
}

/** The queue group of the workers serving endpoint runs. */
export function computeEndpointQueue(prefix: string): string {
  return `${prefix}_compute_endpoint_workers`;
}

/**
 * An endpoint run handed to a worker. With `run` (the usual case) the message
 * carries the whole run row: the worker records it (`running`, held by
 * `holder` until `leaseUntil`) while the function runs, answers once it is
 * recorded, and writes the outcome under `holder`. The API writes nothing
 * before the dispatch, so a call waits for one round trip fewer. Without `run`
 * (parameters too large for one message) the API wrote the row first and the
 * worker takes the run over from it.
 */
export interface EndpointDispatch {
  readonly runId: string;
  readonly workspaceSlug: string;
  readonly holder: string;
  readonly run?: DispatchedRun;
}

/**
 * A run row as a job or a dispatch carries it (the row's columns, dates as ISO
 * strings): a saved function version's run, or (jobs only) a test run with its
 * own `code` and no function.
 */
export interface CarriedRun {
  readonly jobId: string;
  readonly functionId: string | null;
  readonly functionVersion: number | null;
  /** A test run's own code (then `functionId` and `functionVersion` are null). */
  readonly code?: string;
  readonly functionCodeHash: string;
  readonly triggerId: string | null;
  readonly executionSource: string;
  /** `{triggerParams, executionParams, request}` sealed with the key ring, as stored on the row. */
  readonly params: string;
  readonly paramsKeyVersion: number;
  readonly executionContext: Readonly<Record<string, unknown>>;
  readonly limits: Readonly<Record<string, number>>;
  readonly createdBy: string;
  readonly queuedAt: string;
}

/** An endpoint run as its dispatch carries it. */
export interface DispatchedRun extends CarriedRun {
  /** Until when the hold lasts: past it, a run still running is failed by the sweep (WorkerLost). */
  readonly leaseUntil: string;
}

/** What the endpoint function answered, as the platform sends it to the caller. */
export interface EndpointReplyResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/**
 * A worker's answer to an endpoint dispatch: `busy` (no isolate free: try
 * another worker or answer 503), `lost` (the run was no longer held for it),
 * or `done` as soon as the function ended and its run is recorded (the
 * outcome is written right after).
 */
export type EndpointReply =
  | { readonly kind: 'busy' }
  | { readonly kind: 'lost' }
  | {
      readonly kind: 'done';
      readonly status: 'succeeded' | 'failed' | 'timed_out';
      readonly response?: EndpointReplyResponse;
      /**
       * The run was refused before any of its code ran (its workspace, or its code, suspended
       * after lost isolates): until when (ISO 8601) and why. The caller answers 429.
       */
      readonly refused?: { readonly until: string; readonly message: string };
    };

/**
 * The inbound service asks compute about http-triggers over core NATS
 * request/reply (compute owns triggers; inbound owns arrivals): which trigger a
 * path names, and to queue the run of one stored arrival.
 */
export function httpTriggerResolveSubject(prefix: string): string {
  return `${prefix}.compute.http-triggers.resolve`;
}

export function httpTriggerDescribeSubject(prefix: string): string {
  return `${prefix}.compute.http-triggers.describe`;
}

/** What a replay of an arrival of this trigger would run (a replay's dry run). */
export interface HttpTriggerDescription {
  readonly id: string;
  readonly name: string;
  readonly paused: boolean;
  readonly functionId: string | null;
  /** The current version of the function (what a replay runs), null when the function is gone. */
  readonly functionVersion: number | null;
  readonly autoPersist: { readonly recordSlug: string; readonly collectionId: string } | null;
}

export type HttpTriggerDescribeReply =
  { readonly found: false } | { readonly found: true; readonly trigger: HttpTriggerDescription };

export function httpTriggerDispatchSubject(prefix: string): string {
  return `${prefix}.compute.http-triggers.dispatch`;
}

/**
 * Many arrivals of one workspace at once (`HttpTriggerDispatchBatch`, answered
 * with `HttpTriggerDispatchBatchReply` in the same order): what inbound sends
 * while a dispatch is in flight. One batch costs compute a statement or two
 * for all its arrivals instead of several each. The single form above is kept
 * for services of the previous version during a rolling upgrade.
 */
export function httpTriggerDispatchBatchSubject(prefix: string): string {
  return `${prefix}.compute.http-triggers.dispatch-batch`;
}

export interface HttpTriggerDispatchBatch {
  readonly workspaceSlug: string;
  readonly dispatches: readonly Omit<HttpTriggerDispatch, 'workspaceSlug'>[];
}

export interface HttpTriggerDispatchBatchReply {
  readonly replies: readonly HttpTriggerDispatchReply[];
}

/** The queue group of the compute API replicas answering http-trigger requests. */
export function httpTriggerQueue(prefix: string): string {
  return `${prefix}_compute_http_triggers`;
}

export interface HttpTriggerLookup {
  readonly workspaceSlug: string;
  readonly path: string;
}

/** An http-trigger's settings as inbound checks and captures arrivals with them. */
export interface HttpTriggerSettings {
  readonly id: string;
  readonly name: string;
  readonly functionId: string | null;
  readonly paused: boolean;
  readonly validateSignature: boolean;
  /** Lower case. */
  readonly signatureHeaderName: string;
  /** The signing secret sealed with the shared key ring (`triggerSigningSecretBinding` of @strata/crypto), never in the clear. */
  readonly signingSecret: string | null;
  readonly captureRejected: boolean;
  /** Whether verified arrivals are written as records (autoPersist enabled and linked to a collection). */
  readonly autoPersist: boolean;
}

export type HttpTriggerResolution =
  { readonly found: false } | { readonly found: true; readonly trigger: HttpTriggerSettings };

/** Queue the run of one stored arrival: at most one run per arrival, however often this is asked. */
export interface HttpTriggerDispatch {
  readonly workspaceSlug: string;
  readonly triggerId: string;
  readonly inboundEventId: string;
  readonly correlationId: string;
  /** The job id the run takes: inbound answered it to the sender (the execution id of the 202). */
  readonly jobId: string;
  /** `{body, headers, inboundEventId, correlationId, receivedAt}`: the function's executionParams. */
  readonly executionParams: Readonly<Record<string, unknown>>;
  /**
   * Write the body as a record first, if the trigger's autoPersist is on (inbound asks at
   * most once per arrival: a persist is never retried automatically).
   */
  readonly persist?: boolean;
}

/** What became of an auto-persist (absent: the trigger does not auto-persist). */
export type PersistOutcome =
  { readonly status: 'succeeded'; readonly recordId: string } | { readonly status: 'failed'; readonly error: string };

/**
 * `dispatched`: the run is queued and its job handed to the workers' queue;
 * `queued`: the run is recorded but its job not yet published (compute's sweep will);
 * `dropped`: nothing will run (trigger or function gone, trigger paused, executions limit).
 */
export type HttpTriggerDispatchReply = (
  | { readonly status: 'dispatched' | 'queued'; readonly runId: string; readonly jobId: string }
  | { readonly status: 'dropped'; readonly reason: string; readonly notFound: boolean; readonly runId?: string }
) & { readonly persist?: PersistOutcome };

/**
 * Which of these function ids name live functions of the workspace (core NATS
 * request/reply to the compute API replicas; the orchestration service checks
 * its compute steps with it).
 */
export function functionsExistSubject(prefix: string): string {
  return `${prefix}.compute.functions.exist`;
}

export interface FunctionsExistRequest {
  readonly workspaceSlug: string;
  readonly ids: readonly string[];
}

export interface FunctionsExistReply {
  readonly existing: readonly string[];
  /**
   * Those of `existing` whose code is an endpoint module (`export default async
   * (context)`): they cannot run as a compute step, which calls `run()`.
   * Absent from older replicas' answers.
   */
  readonly endpoints?: readonly string[];
}

/**
 * The orchestration engine's compute steps (core NATS request/reply to the
 * compute API replicas): start a run of a function, and read how a run ended.
 */
export function functionRunStartSubject(prefix: string): string {
  return `${prefix}.compute.functions.run`;
}

export function functionRunStatusSubject(prefix: string): string {
  return `${prefix}.compute.runs.status`;
}

export interface FunctionRunStart {
  readonly workspaceSlug: string;
  readonly functionId: string;
  /** The function's executionParams. */
  readonly executionParams: Readonly<Record<string, unknown>>;
  /**
   * Set while the old form of `executionParams.steps` is kept (docs/orchestration.md, "What a
   * compute step's function receives"): `steps.<id>` holds `{output}`, and the function may still
   * read `steps.<id>.<field>` as before, each step's first such read logging a deprecation warning
   * in the run's logs that names `sunset` (YYYY-MM-DD). Absent: executionParams as they are.
   */
  readonly legacyStepOutputs?: { readonly sunset: string };
  /** The run's wall-clock limit (the step's timeoutMs). */
  readonly timeoutMs: number;
  /** Shown on the run record's executionContext. */
  readonly origin: Readonly<Record<string, unknown>>;
  /**
   * The run's job id (a UUID), which names the start once: asked again with the
   * same job id (an answer lost to a timeout, a claim rolled back after the
   * start), compute answers the run it started first and starts nothing.
   */
  readonly jobId?: string;
}

export type FunctionRunStartReply =
  | { readonly started: true; readonly runId: string; readonly jobId: string; readonly rateLimited: boolean }
  | {
      readonly started: false;
      readonly reason: string;
      /** Why, for the step's error (`FUNCTION_NOT_FOUND` when absent). */
      readonly code?: 'FUNCTION_NOT_FOUND' | 'PARAMETERS_TOO_LARGE';
    };

/**
 * Compute's notice (core NATS publish, no queue group: every orchestration
 * replica hears it) that a function run started by `functionRunStartSubject`
 * ended. It only shortens the wait: a missed notice is made up by polling
 * `functionRunStatusSubject`, so nothing depends on its delivery.
 */
export function functionRunEndedSubject(prefix: string): string {
  return `${prefix}.compute.runs.ended`;
}

export interface FunctionRunEnded {
  readonly workspaceSlug: string;
  readonly runId: string;
  /** The run's job id (the start's `jobId`): names the step attempt before its run id is recorded. */
  readonly jobId?: string;
  /** The start's `origin`, as given. */
  readonly origin: Readonly<Record<string, unknown>>;
  /** How the run ended, as `functionRunStatusSubject` would answer (saves asking). */
  readonly end: FunctionRunStatusReply & { readonly found: true };
}

export interface FunctionRunStatusQuery {
  readonly workspaceSlug: string;
  readonly runId: string;
}

export type FunctionRunStatusReply =
  | { readonly found: false }
  | {
      readonly found: true;
      readonly status: string;
      readonly returnValue?: unknown;
      readonly error?: { readonly name?: string; readonly message?: string } | null;
    };
