import { AsyncResource } from 'node:async_hooks';
import { Logger } from '@nestjs/common';

/**
 * Runs `work` now and again every `intervalMs` after each run ends (never two at
 * once), logging failures and carrying on; `stop` waits for the run in flight.
 * `wake` asks for a run as soon as possible (right after the one in flight);
 * it does nothing before `start`, so a disabled task stays disabled.
 *
 * Each run starts in the async context the task was made in, not in the one of
 * whoever woke it: a wake from inside a request's transaction does not make the
 * run part of that request (its statements are not that transaction's).
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private woken = false;
  private started = false;
  private readonly runNow: () => void;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly logger = new Logger(name),
  ) {
    this.runNow = AsyncResource.bind(() => this.runOnce());
  }

  start(firstDelayMs = this.intervalMs): void {
    this.started = true;
    this.schedule(firstDelayMs);
  }

  /** Runs the work now, or again right after the run in flight ends. */
  wake(): void {
    if (this.stopped || !this.started) return;
    if (this.running) {
      this.woken = true;
      return;
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.runNow, delayMs);
  }

  private runOnce(): void {
    this.timer = undefined;
    this.woken = false;
    this.running = this.work()
      .catch((err: unknown) => this.logger.warn({ msg: `${this.name} failed; retrying`, err: String(err) }))
      .finally(() => {
        this.running = undefined;
        this.schedule(this.woken ? 0 : this.intervalMs);
      });
  }
}
