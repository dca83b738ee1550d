import { performance } from 'node:perf_hooks';
import ivm from 'isolated-vm';
import { MISSING_DEFAULT_EXPORT_MESSAGE, MISSING_RUN_MESSAGE } from './code-check.js';
import { IsolatePool, type PooledWorker, type RetireReason } from './isolate-pool.js';
import { NOT_STARTED_MESSAGE } from './job-checks.js';
import { poolRuns } from './pool-runs.js';
import { LogCollector } from './log-collector.js';
import { PRELUDE_FILENAME, PRELUDE_SOURCE, type PreludeConfig, type PreludeEnvelope } from './prelude.js';
import {
  BRIDGED_API_METHODS,
  type BridgedApiMethod,
  type EndpointResponse,
  type JsonValue,
  type SandboxBridge,
  type SandboxEngine,
  type SandboxError,
  type SandboxJob,
  type SandboxLimits,
  type SandboxResult,
  type SandboxStats,
} from './types.js';

export interface IsolatedVmEngineOptions {
  /** Isolates alive at most = runs at once. */
  isolates: number;
  /** An isolate is disposed after this many runs (V8 heaps of reused isolates grow; see docs/sandbox.md). */
  maxRunsPerIsolate: number;
  /** An isolate is disposed after a run that leaves its used heap above this share of its limit. Default 0.5. */
  maxHeapRatio?: number;
  /** Runs allowed to wait for a free isolate; beyond that `run` rejects with SandboxBusyError. Default 1000. */
  maxQueue?: number;
  /** Bytes of JSON of the arguments of one api call. Default 1 MiB. */
  maxArgBytes?: number;
  /** api calls of one run awaiting the bridge at once. Default 32. */
  maxPendingCalls?: number;
  /** setTimeout timers of one run pending at once. Default 64. */
  maxTimers?: number;
  /** api calls of one run in all; the calls past it reject inside. Default 1000. */
  maxApiCalls?: number;
  /**
   * How long a run may have nothing pending (no api call, no timer) before the
   * engine looks whether its isolate is idle too: a run whose promise can then
   * never settle ends `failed` (`NeverSettled`) instead of holding its isolate
   * to the wall clock. Default 1000 ms.
   */
  idleCheckMs?: number;
  /**
   * isolated-vm's "V8 lost control of an isolate" callback (V8 ran out of memory where the limit
   * could not stop the run; the isolate's thread now sleeps in its out-of-memory handler for good).
   * The run on that isolate has ended as `memory_exceeded` by then, the isolate is never used
   * again, and the engine takes no more runs (waiting ones are refused as after `close`). Its advice: stop taking work, finish the runs under way and end the process, by a signal
   * (`process.exit` waits on the lost thread forever). Called once per lost isolate. Default: write the
   * message to stderr and abort.
   */
  onCatastrophicError?: (message: string) => void;
  /** Isolates kept from background runs while other runs arrive during a backlog (`IsolatePoolOptions`). */
  reserveForOthers?: { readonly slots: number; readonly ms: number };
}

/** The file name user code is compiled under: stack frames of user code read `function.js:line:column`. */
export const USER_CODE_FILENAME = 'function.js';
export const SEARCH_RECORDS_MESSAGE =
  'api.searchRecords is not a function: method not found (removed; use api.queryRecords)';

const MIB = 1024 * 1024;
const MAX_ERROR_CHARS = 8 * 1024;
const SYNC_TIMEOUT_MESSAGE = 'Script execution timed out.';
const BRIDGED = new Set<string>(BRIDGED_API_METHODS);

interface EngineIsolate extends PooledWorker {
  readonly isolate: ivm.Isolate;
  /** Used + external heap after the last run and the next context (the baseline of the next run's memory figure). */
  heapBytes: number;
  /** What an empty context adds to the heap, read once when the isolate's first context is made. */
  contextBytes?: number;
  /**
   * A new, empty context made while the isolate waited for its next run (never
   * used by any run); undefined when making it failed.
   */
  warm?: Promise<ivm.Context | undefined>;
  /** Set while a run is on the isolate: ends it as out of memory when isolated-vm loses the isolate. */
  onLost?: () => void;
  /** The last run that took the isolate: told if the isolate is lost, even after that run ended. */
  lastJob?: SandboxJob;
}

/**
 * Makes the isolate's next context now, on its own thread, while nothing runs
 * there: the next run starts without waiting for it. A run's memory figure does
 * not count the empty context: the heap is read after the isolate's first one,
 * and what that context added is counted into the baseline from then on (a
 * reading per run was one more call into the isolate, about 40 µs of CPU).
 */
function warmUp(worker: EngineIsolate): void {
  const { isolate } = worker;
  if (worker.contextBytes !== undefined) {
    const contextBytes = worker.contextBytes;
    worker.warm = isolate.createContext().then(
      (context) => {
        worker.heapBytes += contextBytes;
        return context;
      },
      () => undefined,
    );
    return;
  }
  // Both on the isolate's thread: a synchronous heap read here blocked the main thread until the
  // isolate's thread let go of its lock (a fifth of the engine's main-thread time in a profile).
  worker.warm = isolate.createContext().then(
    (context) =>
      isolate.getHeapStatistics().then(
        (heap) => {
          const heapBytes = heap.used_heap_size + heap.externally_allocated_size;
          worker.contextBytes = Math.max(0, heapBytes - worker.heapBytes);
          worker.heapBytes = heapBytes;
          return context;
        },
        () => context, // disposed meanwhile: the context goes with it
      ),
    () => undefined,
  );
}

/** The context made ahead for this run, once (undefined when there is none). */
async function takeWarm(worker: EngineIsolate): Promise<ivm.Context | undefined> {
  const warm = worker.warm;
  worker.warm = undefined;
  return warm;
}

interface EngineSettings {
  maxRunsPerIsolate: number;
  maxHeapRatio: number;
  maxArgBytes: number;
  maxPendingCalls: number;
  maxTimers: number;
  maxApiCalls: number;
  idleCheckMs: number;
}

/**
 * What ended a run from outside: its wall clock, its CPU time, V8's out-of-memory
 * handler, its caller (`job.stop`), or the engine finding it waiting on nothing (`IdleWatch`).
 */
type Killed = 'wall' | 'cpu' | 'memory' | 'stopped' | 'idle';

/** A run's end, before it becomes a SandboxResult. */
interface Outcome {
  status: SandboxResult['status'];
  returnValue?: JsonValue;
  error?: SandboxError;
  response?: EndpointResponse;
  /** The isolate must not serve another run. */
  retire?: RetireReason;
}

/**
 * The isolated-vm engine: a pool of isolates, a fresh context per run, user code compiled as
 * `function.js`, host references reachable only from the prelude's closure.
 */
export function createIsolatedVmEngine(options: IsolatedVmEngineOptions): SandboxEngine {
  const settings = {
    maxRunsPerIsolate: positiveInteger(options.maxRunsPerIsolate, 'maxRunsPerIsolate'),
    maxHeapRatio: options.maxHeapRatio ?? 0.5,
    maxArgBytes: options.maxArgBytes ?? MIB,
    maxPendingCalls: options.maxPendingCalls ?? 32,
    maxTimers: options.maxTimers ?? 64,
    maxApiCalls: options.maxApiCalls ?? 1000,
    idleCheckMs: options.idleCheckMs ?? 1000,
  };
  const onCatastrophicError =
    options.onCatastrophicError ??
    ((message: string) => {
      process.stderr.write(`isolated-vm: catastrophic error, aborting: ${message}\n`);
      process.abort();
    });
  const retired = { runs: 0, heap: 0, killed: 0, limitChange: 0, closed: 0 };
  let runs = 0;

  const pool = new IsolatePool<EngineIsolate>({
    size: positiveInteger(options.isolates, 'isolates'),
    maxQueue: options.maxQueue ?? 1000,
    ...(options.reserveForOthers ? { reserveForOthers: options.reserveForOthers } : {}),
    create: (memoryMb) => {
      let lost = false;
      const isolate = new ivm.Isolate({
        memoryLimit: memoryMb,
        // Called on this thread once the isolate's own thread is lost: its run ends (as out of
        // memory) before the host hears of it, so the host's stop finds that run's outcome ready.
        // Only the first call counts: after an out-of-memory loss, isolated-vm calls again when the
        // run's timeout passes plus 5 s ("Script failed to terminate": the thread it waits on sleeps
        // in V8's handler), and a worker still finishing other runs by then counted one loss twice.
        onCatastrophicError: (message: string) => {
          if (lost) return;
          lost = true;
          disposeQuietly(isolate);
          // The process is to stop (isolated-vm's advice): runs waiting for an isolate are refused now
          // (SandboxBusyError, as after close) rather than started on a fresh one meanwhile.
          pool.close();
          worker.onLost?.();
          try {
            worker.lastJob?.onIsolateLost?.();
          } catch {
            // the caller's bookkeeping must not keep the worker from stopping
          }
          onCatastrophicError(message);
        },
      });
      const heap = isolate.getHeapStatisticsSync();
      const worker: EngineIsolate = {
        isolate,
        memoryMb,
        runs: 0,
        heapBytes: heap.used_heap_size + heap.externally_allocated_size,
        dispose: () => {
          if (!isolate.isDisposed) isolate.dispose();
        },
        usable: () => !isolate.isDisposed,
      };
      warmUp(worker);
      return worker;
    },
    onRetire: (reason) => {
      retired[reason]++;
    },
  });

  const runLeased = async (
    lease: { worker: EngineIsolate; release(reason?: RetireReason): void },
    job: SandboxJob,
    bridge: SandboxBridge,
  ): Promise<SandboxResult> => {
    let retire: RetireReason | undefined;
    try {
      runs++;
      lease.worker.runs++;
      lease.worker.lastJob = job;
      job.onStart?.();
      const { result, retire: verdict } = await executeOnIsolate(lease.worker, job, bridge, settings);
      retire = verdict;
      return result;
    } catch (error) {
      retire = 'killed';
      throw error;
    } finally {
      lease.release(retire);
      // An isolate that serves on gets its next context made while it waits.
      if (!retire && !lease.worker.isolate.isDisposed) warmUp(lease.worker);
    }
  };

  const runs$ = poolRuns(pool, runLeased);
  return {
    run: runs$.run,
    tryRun: runs$.tryRun,
    tryReserve: runs$.tryReserve,
    available: runs$.available,
    stats(): SandboxStats {
      const counts = pool.counts();
      return {
        isolates: counts.isolates,
        busy: counts.busy,
        available: pool.available(),
        queued: counts.queued,
        runs,
        isolatesCreated: counts.created,
        isolatesRetired: { ...retired },
      };
    },
    async close() {
      pool.close();
      await runs$.settled();
    },
  };
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/** One run on one leased isolate: never throws for anything user code does. */
async function executeOnIsolate(
  worker: EngineIsolate,
  job: SandboxJob,
  bridge: SandboxBridge,
  settings: EngineSettings,
): Promise<{ result: SandboxResult; retire?: RetireReason }> {
  const { isolate } = worker;
  const { limits } = job;
  const startedAt = performance.now();
  const deadline = startedAt + limits.wallMs;
  const cpuStart = isolate.cpuTime;
  const cpuBudget = BigInt(Math.round(limits.cpuMs * 1e6));
  let cpuSeen = cpuStart;
  /** CPU time the host spent answering the run's calls (parsing, serialising, the bridge's own work), in ns. */
  let hostCpu = 0n;
  const chargeHost = (ms: number) => {
    if (!Number.isFinite(ms) || ms <= 0) return;
    hostCpu += BigInt(Math.round(ms * 1e6));
    // At once, not at the next poll: a run whose calls are quick in wall time but dear in CPU
    // could otherwise end between two polls with its budget spent.
    if (usedCpu() > cpuBudget) kill('cpu');
  };
  /** `work()`, its CPU time on this thread charged to the run. */
  const measured = <T>(work: () => T): T => {
    const before = process.threadCpuUsage();
    try {
      return work();
    } finally {
      const spent = process.threadCpuUsage(before);
      chargeHost((spent.user + spent.system) / 1000);
    }
  };
  /** CPU time the run has used: its isolate's and the host's on its behalf, in ns. */
  const usedCpu = (): bigint => readCpu() - cpuStart + hostCpu;
  const readCpu = (): bigint => {
    try {
      if (!isolate.isDisposed) cpuSeen = isolate.cpuTime;
    } catch {
      // disposed between the check and the read
    }
    return cpuSeen;
  };

  const logs = new LogCollector(limits, startedAt);
  const abort = new AbortController();
  const timers = new HostTimers(deadline, settings.maxTimers);
  let ended = false;
  let pendingCalls = 0;
  /** api calls made and timers set: whether anything of the run can reach the isolate after its end. */
  let asyncStarted = 0;
  /** api calls answered and timers fired: each hands the isolate a continuation of user code. */
  let settled = 0;

  // Killing: a host timer for the wall clock, a host poll of the isolate's CPU time (the `timeout`
  // option only covers synchronous stretches started by the host, not continuations after an await).
  let killed: Killed | undefined;
  let signalKilled!: () => void;
  const killedSignal = new Promise<never>((_resolve, reject) => {
    signalKilled = () => reject(new Error('killed'));
  });
  killedSignal.catch(() => undefined);
  const kill = (reason: Killed) => {
    if (killed) return;
    killed = reason;
    readCpu();
    try {
      isolate.dispose();
    } catch {
      // already disposed
    }
    signalKilled();
  };
  const wallTimer = setTimeout(() => kill('wall'), limits.wallMs);
  worker.onLost = () => kill('memory');
  // Stopped before its user code starts, the run does not start (`work` looks); after, it is killed.
  let userCodeStarted = false;
  const onStop = () => {
    if (userCodeStarted) kill('stopped');
  };
  job.stop?.addEventListener('abort', onStop, { once: true });
  const cpuTimer = setInterval(
    () => {
      if (usedCpu() > cpuBudget) kill('cpu');
    },
    Math.min(50, Math.max(5, Math.floor(limits.cpuMs / 10))),
  );
  /** The `timeout` of a synchronous stretch: what is left of the CPU budget (and of the wall clock). */
  const remainingMs = () => {
    const cpuLeft = limits.cpuMs - Number(usedCpu()) / 1e6;
    const wallLeft = deadline - performance.now();
    return Math.max(1, Math.ceil(Math.min(cpuLeft, wallLeft)));
  };

  /** api calls made by the run, refused ones included. */
  let apiCalls = 0;
  const hostCall = new ivm.Reference(async (method: unknown, argsJson: unknown): Promise<string> => {
    asyncStarted++;
    idle.busy();
    try {
      return await answerCall(method, argsJson);
    } finally {
      settled++;
      idle.settled();
    }
  });
  const answerCall = async (method: unknown, argsJson: unknown): Promise<string> => {
    const refuse = (message: string) => JSON.stringify({ ok: false, message });
    if (ended) return refuse('The run has ended');
    if (typeof method !== 'string' || !BRIDGED.has(method)) return refuse('api method not found');
    if (typeof argsJson !== 'string') return refuse(`api.${method}: the arguments are not JSON`);
    if (Buffer.byteLength(argsJson) > settings.maxArgBytes) {
      return refuse(`api.${method}: the arguments exceed ${settings.maxArgBytes} bytes of JSON`);
    }
    if (pendingCalls >= settings.maxPendingCalls) {
      return refuse(`api.${method}: too many api calls at once (at most ${settings.maxPendingCalls})`);
    }
    if (++apiCalls > settings.maxApiCalls) {
      return refuse(`api.${method}: a run makes at most ${settings.maxApiCalls} api calls`);
    }
    let args: unknown;
    try {
      args = measured(() => JSON.parse(argsJson) as unknown);
    } catch {
      return refuse(`api.${method}: the arguments are not JSON`);
    }
    if (!Array.isArray(args)) return refuse(`api.${method}: the arguments are not a list`);
    pendingCalls++;
    try {
      const value = await measured(() =>
        bridge.call(method as BridgedApiMethod, args as JsonValue[], { signal: abort.signal, charge: chargeHost }),
      );
      const json = measured(() => JSON.stringify(value === undefined ? null : value));
      if (typeof json !== 'string') return refuse(`api.${method}: the host returned no JSON`);
      return `{"ok":true,"value":${json}}`;
    } catch (error) {
      // Only the message crosses: never a host stack or any other property of a host error.
      return refuse(isErrorLike(error) ? error.message : String(error));
    } finally {
      pendingCalls--;
    }
  };
  const hostLog = new ivm.Reference((level: unknown, message: unknown) => {
    if (!ended) logs.add(level, message);
  });
  const hostTimer = new ivm.Reference((id: unknown, ms: unknown): Promise<string> => {
    asyncStarted++;
    const pending = timers.set(id, ms, ended).then((fired) => {
      if (fired === 'fire') settled++;
      idle.settled();
      return fired;
    });
    idle.busy();
    return pending;
  });
  const hostClearTimer = new ivm.Reference((id: unknown) => timers.clear(id));
  // A run waiting on nothing (no call, no timer) whose isolate is idle too can never settle.
  const idle = new IdleWatch(
    settings.idleCheckMs,
    () => pendingCalls === 0 && timers.size === 0,
    async () => {
      if (!runContext || isolate.isDisposed) return false;
      await Promise.race([runContext.eval('0'), killedSignal]);
      return true;
    },
  );
  idle.onIdle = () => kill('idle');
  const config: PreludeConfig = {
    kind: job.kind,
    triggerParams: job.triggerParams ?? null,
    executionParams: job.executionParams ?? null,
    request: job.kind === 'endpoint' ? (job.request ?? null) : null,
    legacyStepOutputs:
      job.kind === 'run' && job.legacyStepOutputs ? { sunset: String(job.legacyStepOutputs.sunset) } : null,
    maxOutputBytes: limits.maxOutputBytes,
    maxLogBytes: limits.maxLogBytes,
    maxLogEntries: limits.maxLogEntries,
    maxArgBytes: settings.maxArgBytes,
    maxTimers: settings.maxTimers,
    maxErrorChars: MAX_ERROR_CHARS,
    methods: BRIDGED_API_METHODS,
    searchRecordsMessage: SEARCH_RECORDS_MESSAGE,
    missingEntryMessage: job.kind === 'run' ? MISSING_RUN_MESSAGE : MISSING_DEFAULT_EXPORT_MESSAGE,
  };

  const releasables: { release(): void }[] = [hostCall, hostLog, hostTimer, hostClearTimer];
  let runContext: ivm.Context | undefined;
  const work = async (): Promise<unknown> => {
    const context = (await takeWarm(worker)) ?? (await isolate.createContext());
    runContext = context;
    releasables.push(context);
    const start = await context.evalClosure(
      PRELUDE_SOURCE,
      [hostCall, hostLog, hostTimer, hostClearTimer, JSON.stringify(config)],
      { result: { reference: true }, filename: PRELUDE_FILENAME, timeout: remainingMs() },
    );
    releasables.push(start);
    let namespace: ivm.Dereference<unknown> | undefined;
    if (job.kind === 'run') {
      if (!(await opened(job.gate)) || job.stop?.aborted) return NOT_STARTED;
      userCodeStarted = true;
      // Compiled and run in one call into the isolate (compileScript then run cost about 90 µs more).
      await context.eval(job.code, { filename: USER_CODE_FILENAME, timeout: remainingMs() });
    } else {
      const module = await isolate.compileModule(job.code, { filename: USER_CODE_FILENAME });
      releasables.push(module);
      await module.instantiate(context, (specifier) => {
        throw new Error(`Cannot import '${specifier}': functions run without a module loader`);
      });
      if (!(await opened(job.gate)) || job.stop?.aborted) return NOT_STARTED;
      userCodeStarted = true;
      await module.evaluate({ timeout: remainingMs() });
      namespace = module.namespace.derefInto();
    }
    const settling = start.apply(undefined, [namespace], {
      result: { promise: true, copy: true },
      timeout: remainingMs(),
    });
    // From here only an api answer or a timer can resume the run: looked at once nothing is pending.
    idle.watch(settling);
    return settling;
  };

  let outcome: Outcome;
  try {
    const envelope = await Promise.race([work(), killedSignal]);
    outcome = readEnvelope(envelope, job);
  } catch (error) {
    outcome = classifyThrown(error, killed, isolate.isDisposed, limits);
  } finally {
    ended = true;
    idle.stop();
    timers.cancelAll();
    abort.abort(RUN_ENDED);
  }
  // An api call answered or a timer fired just before the end hands the isolate user code that runs after
  // it, and a call still pending at the end is answered after it: code that must not share the isolate
  // with the next run (a loop there would be charged to it). The run's limits stay on until the isolate
  // has taken everything handed to it before this probe; a run whose calls were still being answered
  // then (or that made more) gives its isolate up.
  if (asyncStarted > 0 && !killed && runContext && !isolate.isDisposed) {
    const settledAtEnd = settled;
    const pendingAtEnd = pendingCalls;
    try {
      await Promise.race([runContext.eval('0'), killedSignal]);
    } catch {
      // killed (the limits are still on) or disposed: the isolate is retired below
    }
    if (pendingAtEnd > 0 || pendingCalls > 0 || settled !== settledAtEnd) {
      // Disposed now: what it was handed may be running already (a heap reading would wait behind it).
      readCpu();
      disposeQuietly(isolate);
    }
  }
  clearTimeout(wallTimer);
  job.stop?.removeEventListener('abort', onStop);
  worker.onLost = undefined;
  clearInterval(cpuTimer);
  if (killed && outcome.status !== 'timed_out') outcome = classifyThrown(undefined, killed, true, limits);
  for (const releasable of releasables) {
    try {
      releasable.release();
    } catch {
      // the isolate is gone
    }
  }

  readCpu();
  const cpuMs = Number(usedCpu()) / 1e6;
  let memoryUsageBytes = 0;
  let retire = outcome.retire;
  if (isolate.isDisposed) {
    retire = 'killed';
    if (outcome.status === 'memory_exceeded') memoryUsageBytes = limits.memoryMb * MIB;
  } else {
    try {
      const heap = await withinMs(isolate.getHeapStatistics(), HEAP_READ_MS);
      const heapBytes = heap.used_heap_size + heap.externally_allocated_size;
      memoryUsageBytes = Math.max(0, heapBytes - worker.heapBytes);
      worker.heapBytes = heapBytes;
      if (!retire && heapBytes > settings.maxHeapRatio * worker.memoryMb * MIB) retire = 'heap';
    } catch {
      // The isolate did not answer (busy with something no run owns any more) or is gone.
      disposeQuietly(isolate);
      retire = 'killed';
    }
    if (!retire && worker.runs >= settings.maxRunsPerIsolate) retire = 'runs';
  }

  const result: SandboxResult = {
    status: outcome.status,
    logs: logs.entries,
    logsTruncated: logs.truncated,
    cpuMs,
    wallMs: performance.now() - startedAt,
    memoryUsageBytes,
  };
  if (outcome.returnValue !== undefined) result.returnValue = outcome.returnValue;
  if (outcome.error) result.error = outcome.error;
  if (outcome.response) result.response = outcome.response;
  return { result, retire };
}

/** The reason the bridge's signal gives (a reason of our own: `abort()` would build a DOMException per run). */
const RUN_ENDED = Object.assign(new Error('The run has ended'), { name: 'AbortError' });

/** How long the heap reading after a run may take before the isolate is given up. */
const HEAP_READ_MS = 1000;

function disposeQuietly(isolate: ivm.Isolate): void {
  try {
    if (!isolate.isDisposed) isolate.dispose();
  } catch {
    // already disposed
  }
}

/** `promise`, or a rejection once `ms` have passed. */
function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The envelope of a run whose gate stayed closed: no user code ran. */
const NOT_STARTED = JSON.stringify({ ok: false, name: 'NotStarted', message: NOT_STARTED_MESSAGE });

/** Whether a job's gate opened (a job without one is open). */
async function opened(gate: Promise<boolean> | undefined): Promise<boolean> {
  return gate === undefined || (await gate.catch(() => false));
}

/** The prelude's answer, checked again on this side (types, sizes, the response's shape). */
function readEnvelope(envelope: unknown, job: SandboxJob): Outcome {
  if (typeof envelope !== 'string') return failed('Error', 'The function ended without a result');
  let parsed: PreludeEnvelope;
  try {
    parsed = JSON.parse(envelope) as PreludeEnvelope;
  } catch {
    return failed('Error', 'The function ended without a readable result');
  }
  if (parsed.ok !== true) {
    // ArrayBuffers live outside the V8 heap: past the isolate's limit their allocation throws instead
    // of killing the isolate. Uncaught, that is the memory limit too.
    if (parsed.name === 'RangeError' && parsed.message === 'Array buffer allocation failed') {
      return { status: 'memory_exceeded', error: memoryError(job.limits), retire: 'heap' };
    }
    const error: SandboxError = { name: capped(parsed.name), message: capped(parsed.message) };
    const stack = isolateStack(parsed.stack);
    if (stack) error.stack = stack;
    return { status: 'failed', error };
  }
  const { maxOutputBytes } = job.limits;
  let returnValue: JsonValue | undefined;
  if (typeof parsed.value === 'string') {
    const bytes = Buffer.byteLength(parsed.value);
    if (bytes > maxOutputBytes) {
      return failed('RangeError', `The return value is larger than the output limit of ${maxOutputBytes} bytes`);
    }
    returnValue = JSON.parse(parsed.value) as JsonValue;
  }
  if (job.kind === 'endpoint') {
    const response = parsed.response === null ? undefined : readResponse(parsed.response, maxOutputBytes);
    if (typeof response === 'string') return failed('RangeError', response);
    const outcome: Outcome = {
      status: 'succeeded',
      response: response ?? { statusCode: 200, headers: {}, body: returnValue ?? null },
    };
    if (returnValue !== undefined) outcome.returnValue = returnValue;
    return outcome;
  }
  // spec: `{success: false, error}` is a structured failure the function chose to return.
  if (isObject(returnValue) && returnValue.success === false) {
    const reported = returnValue.error;
    const message =
      typeof reported === 'string'
        ? reported
        : reported === undefined
          ? 'run() returned success: false'
          : JSON.stringify(reported);
    return { status: 'failed', returnValue, error: { name: 'FunctionError', message: capped(message) } };
  }
  const outcome: Outcome = { status: 'succeeded' };
  if (returnValue !== undefined) outcome.returnValue = returnValue;
  return outcome;
}

/** The endpoint response set through context.res.json, or a message saying why it is refused. */
function readResponse(json: string, maxOutputBytes: number): EndpointResponse | string {
  const value = JSON.parse(json) as { statusCode?: unknown; headers?: unknown; body?: JsonValue };
  const { statusCode, headers, body } = value;
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) {
    return 'context.res.json: statusCode must be an integer from 100 to 599';
  }
  const clean: Record<string, string> = {};
  if (isObject(headers)) {
    for (const [name, headerValue] of Object.entries(headers)) {
      if (typeof headerValue === 'string') clean[name] = headerValue;
    }
  }
  const bodyBytes = Buffer.byteLength(JSON.stringify(body ?? null));
  if (bodyBytes > maxOutputBytes) return `The response body is larger than the output limit of ${maxOutputBytes} bytes`;
  return { statusCode, headers: clean, body: body ?? null };
}

/** An error raised outside the prelude's `start`: compilation, top-level code, or the engine's kills. */
function classifyThrown(error: unknown, killed: Killed | undefined, disposed: boolean, limits: SandboxLimits): Outcome {
  if (killed === 'wall') {
    return {
      status: 'timed_out',
      error: {
        name: 'TimeoutError',
        message: `The function ran longer than its wall-clock limit of ${limits.wallMs} ms`,
      },
      retire: 'killed',
    };
  }
  const cpuOut: Outcome = {
    status: 'timed_out',
    error: { name: 'TimeoutError', message: `The function used more than its CPU time limit of ${limits.cpuMs} ms` },
    retire: 'killed',
  };
  if (killed === 'cpu') return cpuOut;
  if (killed === 'stopped') {
    return {
      status: 'failed',
      error: { name: 'Stopped', message: 'The run was stopped: the platform no longer runs it.' },
      retire: 'killed',
    };
  }
  if (killed === 'memory') return { status: 'memory_exceeded', error: memoryError(limits), retire: 'killed' };
  if (killed === 'idle') {
    return {
      status: 'failed',
      error: {
        name: 'NeverSettled',
        message:
          'The function never settled: it was waiting for a promise with no api call or timer pending, ' +
          'so nothing could resume it.',
      },
      retire: 'killed',
    };
  }
  const { name, message } = copiedError(error);
  if (message === SYNC_TIMEOUT_MESSAGE) return cpuOut;
  if (disposed) return { status: 'memory_exceeded', error: memoryError(limits), retire: 'killed' };
  const sandboxError: SandboxError = { name: capped(name), message: capped(message) };
  const stack = isErrorLike(error) ? isolateStack(error.stack) : undefined;
  if (stack) sandboxError.stack = stack;
  return { status: 'failed', error: sandboxError };
}

/**
 * Name and message of an error isolated-vm copied out of the isolate. Errors thrown by user code at
 * load time arrive as a plain Error whose message is the isolate's `Name: message` (its own timeout,
 * too, when it interrupts a nested call): split that back. Compile errors keep their name.
 */
function copiedError(error: unknown): { name: string; message: string } {
  if (!isErrorLike(error)) return { name: 'Error', message: String(error) };
  if (error.name === 'Error') {
    const match = /^([A-Za-z_$][\w$]*): ([\s\S]*)$/.exec(error.message);
    if (match) return { name: match[1]!, message: match[2]! };
  }
  return { name: error.name, message: error.message };
}

/** Duck-typed: errors made by isolated-vm's native code are not `instanceof` the caller's realm's Error (Jest). */
function isErrorLike(value: unknown): value is { name: string; message: string; stack?: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

function memoryError(limits: SandboxLimits): SandboxError {
  return { name: 'MemoryLimitError', message: `The function exceeded its memory limit of ${limits.memoryMb} MB` };
}

function failed(name: string, message: string): Outcome {
  return { status: 'failed', error: { name, message } };
}

function capped(text: unknown): string {
  const value = typeof text === 'string' ? text : String(text);
  return value.length > MAX_ERROR_CHARS ? value.slice(0, MAX_ERROR_CHARS) : value;
}

/** The isolate's part of a stack: no prelude frames, nothing after isolated-vm's boundary (host frames). */
function isolateStack(stack: unknown): string | undefined {
  if (typeof stack !== 'string') return undefined;
  const lines: string[] = [];
  for (const line of stack.split('\n')) {
    if (line.includes('<isolated-vm boundary>')) break;
    if (line.includes(PRELUDE_FILENAME) || line.includes('at <isolated-vm>')) continue;
    lines.push(line);
  }
  const text = lines.join('\n');
  return text.length > MAX_ERROR_CHARS * 4 ? text.slice(0, MAX_ERROR_CHARS * 4) : text;
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * setTimeout on the host side: each timer a promise the isolate awaits, resolved 'fire' when due,
 * 'cancel' when cleared or when the run ends. A timer due after the run's deadline is never scheduled
 * (the run is killed before it could fire); it waits for the end of the run to be cancelled.
 */
class HostTimers {
  private readonly pending = new Map<number, { resolve(outcome: string): void; handle?: NodeJS.Timeout }>();

  constructor(
    private readonly deadline: number,
    private readonly max: number,
  ) {}

  set(id: unknown, ms: unknown, ended: boolean): Promise<string> {
    if (ended || typeof id !== 'number' || this.pending.has(id) || this.pending.size >= this.max) {
      return Promise.resolve('cancel');
    }
    const delay = typeof ms === 'number' && ms > 0 ? ms : 0;
    return new Promise<string>((resolve) => {
      const timer: { resolve(outcome: string): void; handle?: NodeJS.Timeout } = { resolve };
      this.pending.set(id, timer);
      if (performance.now() + delay < this.deadline) {
        timer.handle = setTimeout(() => {
          this.pending.delete(id);
          resolve('fire');
        }, delay);
      }
    });
  }

  clear(id: unknown): void {
    if (typeof id !== 'number') return;
    const timer = this.pending.get(id);
    if (!timer) return;
    this.pending.delete(id);
    clearTimeout(timer.handle);
    timer.resolve('cancel');
  }

  cancelAll(): void {
    for (const id of [...this.pending.keys()]) this.clear(id);
  }

  /** Timers pending now. */
  get size(): number {
    return this.pending.size;
  }
}

/**
 * Ends a run that waits on nothing: once its code has started and nothing of
 * it is pending (no api call, no timer) for `delayMs`, it probes the isolate
 * (a call queued behind whatever runs there, microtasks included); if nothing
 * happened meanwhile and still nothing is pending, no continuation of the run
 * can ever be scheduled, and `onIdle` is told. Each call made or answered and
 * each timer set or settled counts as activity and restarts the wait.
 */
class IdleWatch {
  onIdle: () => void = () => undefined;
  private activity = 0;
  private timer: NodeJS.Timeout | undefined;
  private watching = false;
  private done = false;

  constructor(
    private readonly delayMs: number,
    private readonly quiet: () => boolean,
    private readonly probe: () => Promise<boolean>,
  ) {}

  /** The run's code is under way and `settling` settles with it. */
  watch(settling: Promise<unknown>): void {
    this.watching = true;
    settling.then(
      () => this.stop(),
      () => this.stop(),
    );
    this.arm();
  }

  busy(): void {
    this.activity++;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  settled(): void {
    this.activity++;
    this.arm();
  }

  stop(): void {
    this.done = true;
    clearTimeout(this.timer);
  }

  private arm(): void {
    if (!this.watching || this.done || !this.quiet()) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.check(), this.delayMs);
  }

  private async check(): Promise<void> {
    this.timer = undefined;
    if (this.done || !this.quiet()) return;
    const seen = this.activity;
    let probed: boolean;
    try {
      probed = await this.probe();
    } catch {
      return; // the run was killed meanwhile
    }
    // After the probe's own answer, a settled run has told `watch` (its answer came first).
    await new Promise((resolve) => setImmediate(resolve));
    if (!probed || this.done || this.activity !== seen || !this.quiet()) {
      this.arm();
      return;
    }
    this.onIdle();
  }
}
