import type { JsonValue, SandboxBridge, SandboxCallContext, SandboxJob, SandboxLimits } from '../src/types.js';

/** Generous limits: the normal cases never come near them. */
export const ROOMY: SandboxLimits = {
  memoryMb: 64,
  cpuMs: 10_000,
  wallMs: 20_000,
  maxLogBytes: 64 * 1024,
  maxLogEntries: 1000,
  maxOutputBytes: 1024 * 1024,
};

export function runJob(
  code: string,
  overrides: Partial<SandboxJob> = {},
  limits: Partial<SandboxLimits> = {},
): SandboxJob {
  return {
    kind: 'run',
    code,
    triggerParams: null,
    executionParams: null,
    ...overrides,
    limits: { ...ROOMY, ...overrides.limits, ...limits },
  };
}

export interface RecordedCall {
  method: string;
  args: JsonValue[];
  context: SandboxCallContext;
}

/** A bridge that records its calls and answers with `answer` (default: echo the method and arguments). */
export function recordingBridge(
  answer: (method: string, args: JsonValue[], context: SandboxCallContext) => Promise<JsonValue> | JsonValue = (
    method,
    args,
  ) => ({ method, args }),
): SandboxBridge & { calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  return {
    calls,
    call: async (method, args, context) => {
      calls.push({ method, args, context });
      return answer(method, args, context);
    },
  };
}
