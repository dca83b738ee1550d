import type {
  BridgedApiMethod,
  EndpointRequest,
  FunctionKind,
  JsonValue,
  SandboxLimits,
  SandboxResult,
  SandboxStats,
} from '../types.js';

/**
 * The messages between a process-pool engine and its sandbox processes (one
 * IPC channel each, structured clone). Only data crosses: a job's callbacks,
 * gate and stop signal stay with the engine, which sends what they decide.
 */

/** What a sandbox process is started with (its one command-line argument, as JSON). */
export interface SandboxProcessSettings {
  /** Isolates of this process: runs at once. */
  readonly isolates: number;
  readonly maxRunsPerIsolate: number;
  readonly maxHeapRatio?: number;
  readonly maxArgBytes?: number;
  readonly maxPendingCalls?: number;
  readonly maxTimers?: number;
  readonly maxApiCalls?: number;
  readonly idleCheckMs?: number;
}

/** A job as it crosses: the data of `SandboxJob`, `gated` for a gate the engine opens later. */
export interface JobData {
  readonly kind: FunctionKind;
  readonly code: string;
  readonly triggerParams: JsonValue;
  readonly executionParams: JsonValue;
  readonly request?: EndpointRequest;
  readonly legacyStepOutputs?: { readonly sunset: string };
  readonly limits: SandboxLimits;
  readonly gated: boolean;
}

export type ToSandbox =
  | { readonly t: 'run'; readonly id: number; readonly job: JobData }
  /** The gate of a `gated` job settled. */
  | { readonly t: 'gate'; readonly id: number; readonly open: boolean }
  /** The job's `stop` signal was aborted. */
  | { readonly t: 'stop'; readonly id: number }
  /** The answer to an `api` call (`call` below). */
  | {
      readonly t: 'answer';
      readonly id: number;
      readonly call: number;
      readonly ok: boolean;
      readonly value?: JsonValue;
      readonly message?: string;
      /** Host CPU time the engine's side spent on the call, in µs: counted against the run. */
      readonly cpuUs: number;
    };

export type FromSandbox =
  | { readonly t: 'ready' }
  /** The run has its isolate (`SandboxJob.onStart`). */
  | { readonly t: 'started'; readonly id: number }
  | {
      readonly t: 'call';
      readonly id: number;
      readonly call: number;
      readonly method: BridgedApiMethod;
      readonly args: JsonValue[];
    }
  | { readonly t: 'result'; readonly id: number; readonly result: SandboxResult; readonly stats: SandboxStats }
  /** The process's engine refused the job (`run` rejected): `busy` for SandboxBusyError. */
  | { readonly t: 'refused'; readonly id: number; readonly busy: boolean; readonly message: string }
  /**
   * An isolate was lost (isolated-vm's catastrophic error): `id` is the run that
   * last had it, during or after that run. The process takes no more runs.
   */
  | { readonly t: 'lost'; readonly id?: number; readonly message: string };
