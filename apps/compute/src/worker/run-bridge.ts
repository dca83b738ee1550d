import { createHmac } from 'node:crypto';
import type { BridgedApiMethod, JsonValue, SandboxBridge, SandboxCallContext } from '@strata/sandbox';

/** One `api` call of a run, as the run record lists it. */
export interface ApiCallRecord {
  method: string;
  /** ms since the run's bridge was made. */
  startedAtMs: number;
  durationMs: number;
  ok: boolean;
  error?: string;
}

/** Calls a run keeps a record of; later calls are counted, not listed. */
const MAX_RECORDED_CALLS = 1000;

/** A method of `api` implemented on the host. */
type Handler = (args: JsonValue[], context: SandboxCallContext) => Promise<JsonValue>;

function stringArg(args: JsonValue[], index: number, name: string): string {
  const value = args[index];
  if (typeof value !== 'string') throw new Error(`${name} must be a string`);
  return value;
}

/** `api.hmacSha256(secret, message)`: the hex HMAC-SHA256 of `message` under `secret`. */
const hmacSha256: Handler = (args) =>
  Promise.resolve(
    createHmac('sha256', stringArg(args, 0, 'secret'))
      .update(stringArg(args, 1, 'message'))
      .digest('hex'),
  );

/**
 * The host side of one run's `api`: each call is timed and recorded on the run
 * (method, start, duration, outcome; never arguments or results, which may hold
 * personal data). Methods whose host side is not built yet refuse with a clear
 * error naming the method.
 */
export class RunBridge implements SandboxBridge {
  readonly calls: ApiCallRecord[] = [];
  unrecordedCalls = 0;
  private readonly started = performance.now();
  private readonly handlers: Partial<Record<BridgedApiMethod, Handler>> = { hmacSha256 };

  async call(method: BridgedApiMethod, args: JsonValue[], context: SandboxCallContext): Promise<JsonValue> {
    const startedAt = performance.now();
    const handler = this.handlers[method];
    try {
      if (!handler) throw new Error(`api.${method} is not available on this platform version yet.`);
      const result = await handler(args, context);
      this.record(method, startedAt, true);
      return result;
    } catch (err) {
      this.record(method, startedAt, false, err instanceof Error ? err.message : String(err));
      throw err;
    }
  }

  private record(method: string, startedAt: number, ok: boolean, error?: string): void {
    if (this.calls.length >= MAX_RECORDED_CALLS) {
      this.unrecordedCalls++;
      return;
    }
    const now = performance.now();
    this.calls.push({
      method,
      startedAtMs: Math.round((startedAt - this.started) * 1000) / 1000,
      durationMs: Math.round((now - startedAt) * 1000) / 1000,
      ok,
      ...(error === undefined ? {} : { error: error.slice(0, 500) }),
    });
  }
}
