import { ApiRefusal } from './api/handler.js';

/** The job message of a run: acknowledged once the run is claimed or recorded, handed back otherwise. */
export interface JobMessage {
  ack(): void;
  nak(delayMs?: number): void;
  /** Tells the stream the job is still being worked on: its ack deadline starts again. */
  working(): void;
}

/** What became of a deferred claim once its run ended. */
export type ClaimState =
  /** The run became this worker's (`running`, under its lease). */
  | 'claimed'
  /** The run was not queued any more (cancelled, or another worker had it): nothing of this execution counts. */
  | 'lost'
  /** Never claimed (or the claim's answer never came): the outcome is written with the claim, if the run is still queued. */
  | 'unclaimed';

export interface DeferredClaimOptions {
  /** The claim itself: whether the run (still queued) is now this worker's. */
  readonly take: () => Promise<boolean>;
  /** Claims once the run has run this long (from `start`), whatever it does. */
  readonly afterMs: number;
  /** Told once, when the claim succeeds (the job is acknowledged, the lease renewed from then on). */
  readonly onClaimed: () => void;
  /** Told once, when the claim finds the run not queued any more: the run is stopped where it is. */
  readonly onLost: () => void;
}

/**
 * The claim of a run its job carried, made only when it has to be: before the
 * run's first call into the platform (the first thing it does that can be
 * seen outside the sandbox), or once it has run `afterMs` (from `start`, when
 * it got its isolate), so that a run of any length shows `running` under a
 * lease. A run waiting for an isolate stays `queued`: deleting its function
 * cancels it, and the claim then refuses it. A run that ends before either
 * has done nothing but compute: its outcome is written together with the
 * claim, in one statement, and if the worker dies first the job comes back
 * and the run simply executes again.
 */
export class DeferredClaim {
  private attempt: Promise<boolean> | undefined;
  private ended = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DeferredClaimOptions) {}

  /** The run has its isolate: the claim is made `afterMs` from now at the latest. */
  start(): void {
    if (this.timer || this.ended) return;
    this.timer = this.claimAfter(this.options.afterMs);
  }

  /** Claims once `ms` have passed; a claim whose statement failed is tried again as long again later. */
  private claimAfter(ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      this.claim().catch(() => {
        if (!this.ended && !this.attempt) this.timer = this.claimAfter(Math.max(ms, 50));
      });
    }, ms);
  }

  /**
   * Claims the run (once: a claim whose statement failed is tried again by the
   * next caller); whether it is this worker's. After the run ended it claims nothing.
   */
  claim(): Promise<boolean> {
    if (this.attempt) return this.attempt;
    if (this.ended) return Promise.resolve(false);
    const attempt = this.options.take().then(
      (claimed) => {
        if (claimed) this.options.onClaimed();
        else this.options.onLost();
        return claimed;
      },
      (err: unknown) => {
        if (this.attempt === attempt) this.attempt = undefined;
        throw err;
      },
    );
    this.attempt = attempt;
    return attempt;
  }

  /** Before a call into the platform: the run must be this worker's first. */
  async required(): Promise<void> {
    if (!(await this.claim())) {
      throw new ApiRefusal('This run was cancelled or is run by another worker: it makes no more calls.');
    }
  }

  /** Ends the claim's window (no claim starts after it) and answers how it stands. */
  async end(): Promise<ClaimState> {
    this.ended = true;
    clearTimeout(this.timer);
    if (!this.attempt) return 'unclaimed';
    try {
      return (await this.attempt) ? 'claimed' : 'lost';
    } catch {
      return 'unclaimed';
    }
  }
}
