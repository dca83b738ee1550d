import type { BridgedApiMethod, JsonValue, SandboxBridge, SandboxCallContext } from '@strata/sandbox';
import { ApiRefusal, MAX_ARGUMENT_DEPTH, nestsDeeperThan, type ApiHandler } from './api/handler.js';

/** One `api` call of a run, as the run record lists it. */
export interface ApiCallRecord {
  method: string;
  /** ms since the run's bridge was made. */
  startedAtMs: number;
  durationMs: number;
  ok: boolean;
  error?: string;
  deprecated?: string;
}

/** Methods that compute in the host and change nothing outside it: they need no claim (`beforeEffect`). */
const PURE_METHODS: ReadonlySet<string> = new Set(['hmacSha256']);

/** What a call the run's end cut off (or never started) is recorded with. */
const RUN_ENDED_MESSAGE = 'The run ended before this call was answered.';

/** Calls a run keeps a record of; later calls are counted, not listed. */
const MAX_RECORDED_CALLS = 1000;
const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * The host side of one run's `api`: each call is timed and recorded on the run
 * (method, start, duration, outcome, deprecation; never arguments or results,
 * which may hold personal data). A method without a handler refuses with an error naming it. Only refusals meant for the function (`ApiRefusal`) reach it
 * with their message: the platform's own failures (a database error, say) reach
 * it as a generic message and are reported to `onInternalError`.
 */
export class RunBridge implements SandboxBridge {
  readonly calls: ApiCallRecord[] = [];
  unrecordedCalls = 0;
  private readonly started = performance.now();

  constructor(
    private readonly handlers: Readonly<Partial<Record<string, ApiHandler>>>,
    /** Told of a handler's own failure (not a refusal meant for the function), which the function sees only as a generic error. */
    private readonly onInternalError: (method: string, err: unknown) => void = () => undefined,
    /**
     * Awaited before every call but the pure ones (a run executed before its
     * claim claims here: `DeferredClaim`); a rejection refuses the call.
     */
    private readonly beforeEffect?: () => Promise<void>,
  ) {}

  async call(method: BridgedApiMethod, args: JsonValue[], context: SandboxCallContext): Promise<JsonValue> {
    const startedAt = performance.now();
    let deprecated: string | undefined;
    const handler = Object.hasOwn(this.handlers, method) ? this.handlers[method] : undefined;
    try {
      if (!handler) throw new ApiRefusal(`api.${method} is not a method of the platform.`);
      if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
        throw new ApiRefusal(
          `api.${method}: its arguments nest objects and arrays deeper than ${MAX_ARGUMENT_DEPTH} levels`,
        );
      }
      if (this.beforeEffect && !PURE_METHODS.has(method)) await this.beforeEffect();
      // A call the run left behind when it ended (not awaited, or waiting for the claim) does nothing.
      if (context.signal.aborted) throw new ApiRefusal(RUN_ENDED_MESSAGE);
      const result = await handler(args, context, { deprecated: (message) => (deprecated = message) });
      this.record(method, startedAt, true, undefined, deprecated);
      return result;
    } catch (err) {
      // Cut off by the run's end, not failed: nothing for the platform's error log.
      const cutOff = !(err instanceof ApiRefusal) && context.signal.aborted;
      const refusal =
        err instanceof ApiRefusal
          ? err
          : new ApiRefusal(
              cutOff ? RUN_ENDED_MESSAGE : `api.${method} failed on the platform's side; try again later.`,
            );
      if (refusal !== err && !cutOff) this.onInternalError(method, err);
      this.record(method, startedAt, false, refusal.message, deprecated);
      throw refusal;
    }
  }

  /** The records to store on the run (with the count of calls beyond the cap). */
  recorded(): (ApiCallRecord | { unrecordedCalls: number })[] {
    return this.unrecordedCalls ? [...this.calls, { unrecordedCalls: this.unrecordedCalls }] : this.calls;
  }

  private record(method: string, startedAt: number, ok: boolean, error?: string, deprecated?: string): void {
    if (this.calls.length >= MAX_RECORDED_CALLS) {
      this.unrecordedCalls++;
      return;
    }
    this.calls.push({
      method,
      startedAtMs: round(startedAt - this.started),
      durationMs: round(performance.now() - startedAt),
      ok,
      ...(error === undefined ? {} : { error: error.slice(0, 500) }),
      ...(deprecated === undefined ? {} : { deprecated }),
    });
  }
}
