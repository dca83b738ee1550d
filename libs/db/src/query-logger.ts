import type { Logger as TypeOrmLogger } from 'typeorm';

/**
 * TypeORM's console loggers print query parameters, and parameters carry secret
 * hashes, encrypted fields and personal data. This one never does: it writes the
 * SQL text and the error message only, as JSON lines on stderr. Query errors are
 * not logged here at all: the service decides whether an error is expected (a
 * unique violation becomes a 409) or not (the error filter logs the 500 with its
 * request id).
 */
export class ParameterFreeQueryLogger implements TypeOrmLogger {
  /** `verbose` adds migration and schema messages; slow queries are always reported. */
  constructor(
    private readonly schema: string,
    private readonly verbose = false,
  ) {}

  logQuery(): void {}
  logQueryError(): void {}

  logQuerySlow(time: number, query: string): void {
    this.write('warn', { msg: 'slow query', durationMs: time, sql: query });
  }

  logSchemaBuild(message: string): void {
    if (this.verbose) this.write('log', { msg: message });
  }

  logMigration(message: string): void {
    if (this.verbose) this.write('log', { msg: message });
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn' || this.verbose) this.write(level === 'warn' ? 'warn' : 'log', { msg: String(message) });
  }

  private write(level: 'log' | 'warn', entry: Record<string, unknown>): void {
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level, context: `TypeORM:${this.schema}`, ...entry })}\n`,
    );
  }
}
