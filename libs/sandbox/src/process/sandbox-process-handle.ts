import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { JsonValue, SandboxBridge, SandboxJob, SandboxResult, SandboxStats } from '../types.js';
import { SandboxBusyError } from '../types.js';
import type { FromSandbox, JobData, SandboxProcessSettings, ToSandbox } from './protocol.js';

/** Where a sandbox process is in its life: serving, lost an isolate (finishing its runs), or ended. */
export type SandboxProcessState = 'live' | 'lost' | 'ended';

/** The name of the error of a run whose sandbox process ended under it. */
export const SANDBOX_LOST = 'SandboxLost';

interface InFlight {
  readonly job: SandboxJob;
  readonly bridge: SandboxBridge;
  /** Aborted when the run ends: the `signal` of its api calls. */
  readonly calls: AbortController;
  started: boolean;
  resolve(result: SandboxResult): void;
  reject(error: Error): void;
  readonly cleanup: () => void;
}

export interface SandboxProcessEvents {
  /** The process lost an isolate (`message` is isolated-vm's); the run that last had it was told already. */
  onLost(handle: SandboxProcessHandle, message: string): void;
  /** The process ended (killed by its engine, or on its own: `expected` false). */
  onExit(handle: SandboxProcessHandle, expected: boolean, detail: string): void;
  /** The process has no run left (the engine ends one that lost an isolate then). */
  onIdle(handle: SandboxProcessHandle): void;
  /**
   * A line the process wrote to its stdout or stderr (V8's own reports: an isolate's last
   * garbage collections before it ran out of memory, a fatal error).
   */
  onOutput(handle: SandboxProcessHandle, line: string): void;
}

/** Lines of output kept from one process: V8's report of a lost isolate is a few dozen. */
const MAX_OUTPUT_LINES = 200;

/** Runs ids a process keeps the loss hooks of after their runs ended: far more than its isolates. */
const KEPT_HOOKS = 64;

/**
 * One sandbox process seen from its engine: starts it, sends it jobs, answers
 * its runs' `api` calls with their bridges, and turns what it reports into the
 * runs' results. A run under way when the process ends fails as `SandboxLost`;
 * one that had not started yet is refused with SandboxBusyError (nothing of it ran).
 */
export class SandboxProcessHandle {
  state: SandboxProcessState = 'live';
  /** The engine's last reading of the process's own engine (sent with every result). */
  stats: SandboxStats | undefined;
  readonly startedAt = performance.now();
  /** Undefined until the process is started (`startAfterMs`). */
  private child: ChildProcess | undefined;
  private startTimer: NodeJS.Timeout | undefined;
  private readonly ended$: (() => void)[] = [];
  private readonly inFlight = new Map<number, InFlight>();
  private readonly lossHooks = new Map<number, () => void>();
  private readonly outbox: ToSandbox[] = [];
  private ready = false;
  private killedBy: string | undefined;

  /**
   * Starts the process, after `startAfterMs` when given (a position whose
   * processes keep ending at once): it takes runs meanwhile, which wait for it.
   */
  constructor(
    private readonly module: string,
    private readonly settings: SandboxProcessSettings,
    private readonly execArgv: readonly string[],
    private readonly events: SandboxProcessEvents,
    startAfterMs = 0,
  ) {
    if (startAfterMs > 0) {
      this.startTimer = setTimeout(() => this.start(), startAfterMs);
      this.startTimer.unref();
    } else {
      this.start();
    }
  }

  private start(): void {
    this.startTimer = undefined;
    const child = fork(this.module, [JSON.stringify(this.settings)], {
      execArgv: [...this.execArgv],
      serialization: 'advanced',
      // Piped, not inherited: what V8 prints reaches the engine's owner as lines (its log), never
      // the owner's own stderr, where a supervisor (Jest's, say) would take a sandbox process's
      // "Last few GCs" for its own out-of-memory crash.
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child = child;
    let lines = 0;
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        if (line.trim() === '' || lines++ >= MAX_OUTPUT_LINES) return;
        this.events.onOutput(this, line);
      });
    }
    child.on('message', (message: FromSandbox) => this.receive(message));
    // A failed start (no such module, say) ends in 'exit' too.
    child.on('error', () => undefined);
    // 'close', not 'exit': every message the process sent before it ended has been read by then.
    child.once('close', (code, signal) => this.ended(code, signal));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Runs now on the process. */
  get running(): number {
    return this.inFlight.size;
  }

  run(id: number, job: SandboxJob, bridge: SandboxBridge): Promise<SandboxResult> {
    if (this.state !== 'live') return Promise.reject(new SandboxBusyError('The sandbox process is not serving'));
    return new Promise<SandboxResult>((resolve, reject) => {
      const onStop = () => this.post({ t: 'stop', id });
      const cleanup = () => job.stop?.removeEventListener('abort', onStop);
      this.inFlight.set(id, {
        job,
        bridge,
        calls: new AbortController(),
        started: false,
        resolve,
        reject,
        cleanup,
      });
      if (job.onIsolateLost) this.keepHook(id, job.onIsolateLost);
      const data: JobData = {
        kind: job.kind,
        code: job.code,
        triggerParams: job.triggerParams ?? null,
        executionParams: job.executionParams ?? null,
        ...(job.request ? { request: job.request } : {}),
        ...(job.legacyStepOutputs ? { legacyStepOutputs: job.legacyStepOutputs } : {}),
        limits: job.limits,
        gated: job.gate !== undefined,
      };
      this.post({ t: 'run', id, job: data });
      job.gate?.then(
        (open) => this.post({ t: 'gate', id, open }),
        () => this.post({ t: 'gate', id, open: false }),
      );
      if (job.stop?.aborted) onStop();
      else job.stop?.addEventListener('abort', onStop, { once: true });
    });
  }

  /** Ends the process now (SIGKILL: a lost isolate's thread would keep any other exit waiting). */
  kill(reason: string): void {
    if (this.state === 'ended') return;
    this.killedBy ??= reason;
    if (this.child) {
      this.child.kill('SIGKILL');
      return;
    }
    // Not started yet: nothing to signal, it ends here.
    clearTimeout(this.startTimer);
    this.ended(null, 'SIGKILL');
  }

  /** Calls `done` once the process has ended (at once if it has). */
  whenEnded(done: () => void): void {
    if (this.state === 'ended') done();
    else this.ended$.push(done);
  }

  /** Takes no further run; the ones under way go on. */
  markLost(): void {
    if (this.state === 'live') this.state = 'lost';
  }

  private post(message: ToSandbox): void {
    if (this.state === 'ended') return;
    if (!this.ready) {
      this.outbox.push(message);
      return;
    }
    this.child!.send(message, (error) => {
      // The channel closed under it: the process is ending, and 'exit' settles its runs.
      if (error) this.kill('its channel failed');
    });
  }

  private receive(message: FromSandbox): void {
    switch (message.t) {
      case 'ready':
        this.ready = true;
        for (const queued of this.outbox.splice(0)) this.post(queued);
        return;
      case 'started': {
        const run = this.inFlight.get(message.id);
        if (!run) return;
        run.started = true;
        run.job.onStart?.();
        return;
      }
      case 'call':
        this.answer(message);
        return;
      case 'result':
        this.stats = message.stats;
        this.settle(message.id, (run) => run.resolve(message.result));
        return;
      case 'refused':
        this.settle(message.id, (run) =>
          run.reject(message.busy ? new SandboxBusyError(message.message) : new Error(message.message)),
        );
        return;
      case 'lost': {
        this.markLost();
        if (message.id !== undefined) {
          const hook = this.lossHooks.get(message.id);
          this.lossHooks.delete(message.id);
          try {
            hook?.();
          } catch {
            // the caller's bookkeeping must not keep the process from being replaced
          }
        }
        this.events.onLost(this, message.message);
        if (this.inFlight.size === 0) this.events.onIdle(this);
        return;
      }
    }
  }

  /** Answers one `api` call with the run's bridge, reporting the host CPU time spent on it. */
  private answer(message: Extract<FromSandbox, { t: 'call' }>): void {
    const run = this.inFlight.get(message.id);
    if (!run) return;
    let cpuUs = 0;
    const measured = <T>(work: () => T): T => {
      const before = process.threadCpuUsage();
      try {
        return work();
      } finally {
        const after = process.threadCpuUsage(before);
        cpuUs += after.user + after.system;
      }
    };
    const reply = (ok: boolean, value: JsonValue | undefined, text: string | undefined) => {
      if (!this.inFlight.has(message.id)) return;
      measured(() =>
        this.post({
          t: 'answer',
          id: message.id,
          call: message.call,
          ok,
          ...(ok ? { value: value ?? null } : { message: text ?? 'The call failed' }),
          cpuUs,
        }),
      );
    };
    let pending: Promise<JsonValue>;
    try {
      pending = measured(() => run.bridge.call(message.method, message.args, { signal: run.calls.signal }));
    } catch (error) {
      reply(false, undefined, messageOf(error));
      return;
    }
    pending.then(
      (value) => reply(true, value, undefined),
      (error: unknown) => reply(false, undefined, messageOf(error)),
    );
  }

  private settle(id: number, how: (run: InFlight) => void): void {
    const run = this.inFlight.get(id);
    if (!run) return;
    this.inFlight.delete(id);
    run.cleanup();
    run.calls.abort(RUN_ENDED);
    how(run);
    if (this.state === 'lost' && this.inFlight.size === 0) this.events.onIdle(this);
  }

  private keepHook(id: number, hook: () => void): void {
    this.lossHooks.set(id, hook);
    if (this.lossHooks.size > KEPT_HOOKS) this.lossHooks.delete(this.lossHooks.keys().next().value!);
  }

  private ended(code: number | null, signal: NodeJS.Signals | null): void {
    const expected = this.killedBy !== undefined;
    this.state = 'ended';
    const detail = this.killedBy ?? `it exited (${signal ?? `code ${String(code)}`})`;
    for (const id of [...this.inFlight.keys()]) {
      this.settle(id, (run) => {
        if (!run.started)
          run.reject(new SandboxBusyError(`The sandbox process ended before the run started: ${detail}`));
        else run.resolve(lostResult(detail));
      });
    }
    this.events.onExit(this, expected, detail);
    for (const done of this.ended$.splice(0)) done();
  }
}

const RUN_ENDED = Object.assign(new Error('The run has ended'), { name: 'AbortError' });

function messageOf(error: unknown): string {
  return typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string'
    ? (error as { message: string }).message
    : String(error);
}

/** The result of a run whose sandbox process ended under it. */
function lostResult(detail: string): SandboxResult {
  return {
    status: 'failed',
    error: {
      name: SANDBOX_LOST,
      message: `The sandbox process running this run was ended (${detail}); the run did not finish.`,
    },
    logs: [],
    logsTruncated: false,
    cpuMs: 0,
    wallMs: 0,
    memoryUsageBytes: 0,
  };
}
