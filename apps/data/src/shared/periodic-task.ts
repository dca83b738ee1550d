import { Logger } from '@nestjs/common';

/**
 * Runs `work` now and again every `intervalMs` after each run ends (never two at
 * once), logging failures and carrying on; `stop` waits for the run in flight.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly logger = new Logger(name),
  ) {}

  start(firstDelayMs = this.intervalMs): void {
    this.schedule(firstDelayMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.work()
        .catch((err: unknown) => this.logger.warn({ msg: `${this.name} failed; retrying`, err: String(err) }))
        .finally(() => this.schedule(this.intervalMs));
    }, delayMs);
  }
}
