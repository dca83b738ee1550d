/**
 * A sandbox process: the isolated-vm engine of a few isolates, driven over its
 * IPC channel by a process-pool engine (`process-pool-engine.ts`). It holds no
 * secret and no connection; `api` calls go back to the engine's side.
 *
 * When isolated-vm loses one of its isolates, the process says so and starts no
 * further run; the runs on its other isolates finish, and the engine that
 * supervises it ends it by SIGKILL (`process.exit` would wait on the lost
 * thread forever). It ends itself the same way when its channel closes.
 */
// First: the stop signals are ignored before anything slow loads.
import './stop-signals.js';
import { writeFileSync } from 'node:fs';
import { createIsolatedVmEngine } from '../isolated-vm-engine.js';
import { SandboxBusyError, type JsonValue, type SandboxBridge, type SandboxJob } from '../types.js';
import type { FromSandbox, SandboxProcessSettings, ToSandbox } from './protocol.js';

interface PendingCall {
  resolve(value: JsonValue): void;
  reject(error: Error): void;
  /** Charges the run what the call cost the engine's side (`SandboxCallContext.charge`). */
  charge?: (cpuMs: number) => void;
}

interface Running {
  readonly stop: AbortController;
  openGate?: (open: boolean) => void;
  readonly calls: Map<number, PendingCall>;
  /** Whether the run's call signal is followed (once per run, not once per call). */
  followed?: boolean;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as SandboxProcessSettings;

// Out of memory, the kernel ends a sandbox process before the worker that supervises it (Linux;
// raising one's own score needs no privilege). Its runs fail, the worker replaces it.
try {
  writeFileSync('/proc/self/oom_score_adj', '500');
} catch {
  // not Linux, or no /proc: the kernel picks as it would
}
const running = new Map<number, Running>();
let lastLost: number | undefined;

function send(message: FromSandbox): void {
  // A closed channel means the engine is gone: the process ends on 'disconnect', or here when the
  // write fails first (an error passed to the callback is not thrown as an 'error' event).
  if (!process.connected) return;
  process.send!(message, (error: Error | null) => {
    if (error) process.kill(process.pid, 'SIGKILL');
  });
}

const engine = createIsolatedVmEngine({
  isolates: settings.isolates,
  maxRunsPerIsolate: settings.maxRunsPerIsolate,
  ...(settings.maxHeapRatio !== undefined ? { maxHeapRatio: settings.maxHeapRatio } : {}),
  ...(settings.maxArgBytes !== undefined ? { maxArgBytes: settings.maxArgBytes } : {}),
  ...(settings.maxPendingCalls !== undefined ? { maxPendingCalls: settings.maxPendingCalls } : {}),
  ...(settings.maxTimers !== undefined ? { maxTimers: settings.maxTimers } : {}),
  ...(settings.maxApiCalls !== undefined ? { maxApiCalls: settings.maxApiCalls } : {}),
  ...(settings.idleCheckMs !== undefined ? { idleCheckMs: settings.idleCheckMs } : {}),
  // Told right after the lost isolate's last job (`onIsolateLost` below names it).
  onCatastrophicError: (message) => {
    const id = lastLost;
    lastLost = undefined;
    send({ t: 'lost', ...(id !== undefined ? { id } : {}), message });
  },
});

function bridgeFor(id: number, run: Running): SandboxBridge {
  let next = 0;
  return {
    call(method, args, context) {
      if (context.signal.aborted) return Promise.reject(new Error('The run has ended'));
      if (!run.followed) {
        run.followed = true;
        // The run ended: answers still to come are for nobody.
        context.signal.addEventListener(
          'abort',
          () => {
            for (const pending of run.calls.values()) pending.reject(new Error('The run has ended'));
            run.calls.clear();
          },
          { once: true },
        );
      }
      const call = next++;
      return new Promise<JsonValue>((resolve, reject) => {
        run.calls.set(call, { resolve, reject, ...(context.charge ? { charge: context.charge } : {}) });
        send({ t: 'call', id, call, method, args });
      });
    },
  };
}

function start(id: number, message: Extract<ToSandbox, { t: 'run' }>): void {
  const { job: data } = message;
  const run: Running = { stop: new AbortController(), calls: new Map() };
  running.set(id, run);
  const job: SandboxJob = {
    kind: data.kind,
    code: data.code,
    triggerParams: data.triggerParams,
    executionParams: data.executionParams,
    ...(data.request ? { request: data.request } : {}),
    ...(data.legacyStepOutputs ? { legacyStepOutputs: data.legacyStepOutputs } : {}),
    limits: data.limits,
    stop: run.stop.signal,
    onStart: () => send({ t: 'started', id }),
    onIsolateLost: () => {
      lastLost = id;
    },
  };
  if (data.gated) job.gate = new Promise<boolean>((resolve) => (run.openGate = resolve));
  engine.run(job, bridgeFor(id, run)).then(
    (result) => {
      running.delete(id);
      send({ t: 'result', id, result, stats: engine.stats() });
    },
    (error: unknown) => {
      running.delete(id);
      send({
        t: 'refused',
        id,
        busy: error instanceof SandboxBusyError,
        message: error instanceof Error ? error.message : String(error),
      });
    },
  );
}

process.on('message', (message: ToSandbox) => {
  switch (message.t) {
    case 'run':
      start(message.id, message);
      return;
    case 'gate':
      running.get(message.id)?.openGate?.(message.open);
      return;
    case 'stop':
      running.get(message.id)?.stop.abort();
      return;
    case 'answer': {
      const call = running.get(message.id)?.calls;
      const pending = call?.get(message.call);
      if (!pending) return;
      call!.delete(message.call);
      pending.charge?.(message.cpuUs / 1000);
      if (message.ok) pending.resolve(message.value ?? null);
      else pending.reject(new Error(message.message ?? 'The call failed'));
      return;
    }
  }
});

// The engine is gone (it stopped, or its process died): nothing here is anyone's any more.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));

send({ t: 'ready' });
