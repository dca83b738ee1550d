/** Only JSON crosses the sandbox boundary, in both directions. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The two shapes of user code (spec, "Function code contract"). */
export type FunctionKind = 'run' | 'endpoint';

/** Limits of one run. Every one of them is enforced by the engine, none is advisory. */
export interface SandboxLimits {
  /** Heap limit of the isolate that serves the run, in MiB (isolated-vm's minimum is 8). */
  memoryMb: number;
  /** CPU time of the isolate during the run, in ms (sync and async code alike). */
  cpuMs: number;
  /** Wall-clock time of the run, in ms, awaits included. */
  wallMs: number;
  /** UTF-8 bytes of all log messages of the run together. */
  maxLogBytes: number;
  /** Number of log entries of the run. */
  maxLogEntries: number;
  /** UTF-8 bytes of the JSON of the return value (and of the endpoint response). */
  maxOutputBytes: number;
}

/** The request an endpoint function sees as `context.req`. */
export interface EndpointRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  payload: JsonValue;
  /** How the platform authenticated the caller (endpoint triggers); the credential itself is never passed on. */
  auth?: { mode: string; principalType?: string; principalId?: string };
}

/**
 * Whose run a job is, and how many isolates that owner may hold at once on an
 * engine (a workspace: one workspace never takes every isolate; docs/sandbox.md, "The pool").
 */
export interface SandboxTenant {
  readonly key: string;
  /**
   * Isolates this key may hold at once (at least 1); its further runs wait while others go past
   * them. Read each time an isolate is handed out (a getter may change it while runs wait).
   */
  readonly maxRuns: number;
}

export interface SandboxJob {
  kind: FunctionKind;
  code: string;
  /** The global `triggerParams` (a fresh copy per run). */
  triggerParams: JsonValue;
  /** The global `executionParams` (a fresh copy per run). */
  executionParams: JsonValue;
  /** kind 'endpoint': `context.req`. */
  request?: EndpointRequest;
  /**
   * kind 'run', an orchestration compute step's: `executionParams.steps.<id>` is `{output}`, and
   * reading it the old way (`steps.<id>.<field>`, the output used as a value) still answers the
   * output's, the first such read of each step logging a deprecation warning naming `sunset`
   * (docs/orchestration.md). Nothing is done for a run without it.
   */
  legacyStepOutputs?: { readonly sunset: string };
  limits: SandboxLimits;
  /**
   * When set, the run's context is made (an endpoint module compiled) at once, but no
   * user code runs (not even top-level statements) until this resolves true;
   * false (or a rejection) ends the run there, failed as `NotStarted`. The
   * caller overlaps what it must settle first (a claim) with that work.
   */
  gate?: Promise<boolean>;
  /**
   * Waits for an isolate behind every run without it (`run` only): a worker
   * marks the jobs of a workspace's backlog so, so that another workspace's run
   * taken later still starts at the next free isolate.
   */
  background?: boolean;
  /** Counted against its tenant's cap of isolates held at once (`run` and `tryRun`; a reservation counts it too). */
  tenant?: SandboxTenant;
  /**
   * Told once the run has its isolate, before its context is made or any of
   * its code runs (a run that waited for a free isolate waited until then).
   * Not told for a run that never got one (stopped while waiting, engine closed).
   */
  onStart?: () => void;
  /**
   * Aborted when the caller no longer wants the run (a worker found the run
   * was not its own any more): a run whose user code has not started does not
   * start (failed as `NotStarted`, as with a closed gate); one under way ends
   * at once, its isolate disposed as when a limit passes, failed as `Stopped`.
   */
  stop?: AbortSignal;
  /**
   * Told when the isolate this run was on is lost for good (isolated-vm's
   * catastrophic error: V8 ran out of memory where the limit could not stop
   * it, or a builtin ignored the run's timeout), during the run or after it
   * ended, until another run takes the isolate; once per isolate, however
   * often isolated-vm reports it. The engine's own `onCatastrophicError` is
   * called next. A worker counts these against the
   * run's workspace (docs/compute.md, "Suspended workspaces").
   */
  onIsolateLost?: () => void;
}

/** What the bridge learns about the run it serves. */
export interface SandboxCallContext {
  /** Aborted when the run ends (settled, timed out, killed): stop work nobody will read. */
  signal: AbortSignal;
  /**
   * Adds CPU time the host spent on the run's behalf (answering its calls) to
   * the run's CPU time: it counts against `cpuMs` like the isolate's own.
   */
  charge?: (cpuMs: number) => void;
}

/**
 * The host side of `api`: the caller (the worker) implements it (data-service calls and so on).
 * Arguments arrive parsed from JSON; the result is sent back as JSON. A rejection becomes an `Error`
 * thrown inside the isolate carrying only the rejection's message (never a host stack).
 */
export interface SandboxBridge {
  call(method: BridgedApiMethod, args: JsonValue[], context: SandboxCallContext): Promise<JsonValue>;
}

export type SandboxLogLevel = 'info' | 'warn' | 'error' | 'debug';

export interface SandboxLogEntry {
  level: SandboxLogLevel;
  message: string;
  /** ms since the run started. */
  at: number;
}

export type SandboxStatus = 'succeeded' | 'failed' | 'timed_out' | 'memory_exceeded';

export interface SandboxError {
  name: string;
  message: string;
  /** The isolate's stack (user code is compiled as `function.js`), never a host stack. */
  stack?: string;
}

export interface EndpointResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: JsonValue;
}

export interface SandboxResult {
  status: SandboxStatus;
  /** What run() (or the endpoint function) returned, JSON-copied; also kept for `{success:false}` returns. */
  returnValue?: JsonValue;
  /** Set for every status but 'succeeded'. */
  error?: SandboxError;
  logs: SandboxLogEntry[];
  logsTruncated: boolean;
  /** kind 'endpoint', when the run succeeded: set through context.res.json, or the return value as a 200 body. */
  response?: EndpointResponse;
  /** CPU time the isolate spent on this run. */
  cpuMs: number;
  wallMs: number;
  /** Growth of the isolate's heap (used + external) across the run; the limit for 'memory_exceeded'. */
  memoryUsageBytes: number;
}

export interface SandboxStats {
  /** Isolates alive now. */
  isolates: number;
  /** Runs executing now. */
  busy: number;
  /** Runs that could start now without waiting. */
  available: number;
  /** Runs waiting for a free isolate. */
  queued: number;
  runs: number;
  isolatesCreated: number;
  /** Isolates disposed, by reason. */
  isolatesRetired: { runs: number; heap: number; killed: number; limitChange: number; closed: number };
  /** An engine whose isolates live in sandbox processes (`createProcessPoolEngine`). */
  processes?: {
    /** Processes taking runs now. */
    serving: number;
    /** Processes that lost an isolate and are finishing their other runs. */
    draining: number;
    /** Isolates lost since the engine started (each cost its process). */
    isolatesLost: number;
    /** Processes that ended without being asked to (a crash). */
    crashed: number;
  };
}

/** What runs a job: an engine, or one of its isolates held for one run. */
export type SandboxRunner = Pick<SandboxEngine, 'run'>;

/**
 * An isolate held for one run that has not started yet, so that nothing else
 * takes it in between (an endpoint call borrowing a background isolate).
 */
export interface SandboxReservation extends SandboxRunner {
  /** Runs the job on the held isolate; once (a second call rejects with SandboxBusyError). */
  run(job: SandboxJob, bridge: SandboxBridge): Promise<SandboxResult>;
  /** Gives the isolate back unused; nothing once `run` was called. */
  release(): void;
}

/** The engine: owns its isolates (or whatever it runs code in); the bridge belongs to the caller. */
export interface SandboxEngine {
  /** Runs the job, waiting for a free isolate if needed; rejects with SandboxBusyError when the wait queue is full. */
  run(job: SandboxJob, bridge: SandboxBridge): Promise<SandboxResult>;
  /** Runs the job only if an isolate is free now; `undefined` otherwise (answer 503 rather than queue). */
  tryRun(job: SandboxJob, bridge: SandboxBridge): Promise<SandboxResult> | undefined;
  /** Holds an isolate that is free now for one run to come; `undefined` when none is. */
  tryReserve(): SandboxReservation | undefined;
  /** How many runs could start now without waiting. */
  available(): number;
  stats(): SandboxStats;
  /** Refuses new runs, rejects queued ones, waits for running ones, disposes every isolate. */
  close(): Promise<void>;
}

/** The `api` methods the engine forwards to the bridge (spec, "Function code contract", 4). */
export const BRIDGED_API_METHODS = [
  'fetchRecord',
  'createRecord',
  'updateRecord',
  'queryRecords',
  'bulkCreateRecords',
  'batchCreateRecords',
  'executeSavedQuery',
  'invokeTrigger',
  'httpPost',
  'fetch',
  'hmacSha256',
  'storeAsJSON',
] as const;

export type BridgedApiMethod = (typeof BRIDGED_API_METHODS)[number];

/** Thrown (rejected) by `run` when every isolate is busy and the wait queue is full, or after `close`. */
export class SandboxBusyError extends Error {
  override readonly name = 'SandboxBusyError';
}
