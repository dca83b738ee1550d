import { Injectable } from '@nestjs/common';

export type ReadinessCheck = () => Promise<void>;

/** Dependencies that must answer before the service takes traffic. */
@Injectable()
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  register(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  async run(timeoutMs = 2000): Promise<Record<string, string>> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          await Promise.race([
            check(),
            new Promise((_, reject) =>
              AbortSignal.timeout(timeoutMs).addEventListener('abort', () => reject(new Error('timed out'))),
            ),
          ]);
          return [name, 'ok'] as const;
        } catch (err) {
          return [name, err instanceof Error ? err.message : String(err)] as const;
        }
      }),
    );
    return Object.fromEntries(entries);
  }
}
