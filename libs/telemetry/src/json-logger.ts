import { trace } from '@opentelemetry/api';
import type { LoggerService, LogLevel } from '@nestjs/common';

const ORDER: Record<LogLevel, number> = { verbose: 0, debug: 1, log: 2, warn: 3, error: 4, fatal: 5 };

/** Keys whose values never reach a log line. */
const SECRET_KEY = /pass(word)?|secret|token|authorization|cookie|api[-_]?key|private/i;

/**
 * Structured JSON logs, one object a line, carrying the active trace and span ids
 * so an SRE can jump from a log line to its trace.
 */
export class JsonLogger implements LoggerService {
  private readonly min: number;

  constructor(
    private readonly service: string,
    level: LogLevel = 'log',
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  ) {
    this.min = ORDER[level];
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.emit('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.emit('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.emit('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.emit('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.emit('fatal', message, rest);
  }

  private emit(level: LogLevel, message: unknown, rest: unknown[]): void {
    if (ORDER[level] < this.min) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level, service: this.service };
    // Nest passes the context as the last string argument, and a stack before it for errors
    // (undefined when there is none: `logger.error({...})` arrives as (message, undefined, context)).
    const args = rest.filter((a) => a !== undefined);
    if (typeof args.at(-1) === 'string') entry['context'] = args.pop();
    if (level === 'error' && typeof args[0] === 'string') entry['stack'] = args.shift();
    if (message instanceof Error) {
      entry['msg'] = message.message;
      entry['stack'] = message.stack;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(entry, redact(message as Record<string, unknown>));
    } else {
      entry['msg'] = String(message);
    }
    if (args.length > 0)
      entry['extra'] = args.map((a) => (typeof a === 'object' && a ? redact(a as Record<string, unknown>) : a));
    const span = trace.getActiveSpan()?.spanContext();
    if (span) {
      entry['trace_id'] = span.traceId;
      entry['span_id'] = span.spanId;
    }
    this.write(JSON.stringify(entry));
  }
}

/** Replaces the values of secret-looking keys, at any depth. */
export function redact(value: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (SECRET_KEY.test(k)) out[k] = '[redacted]';
    else if (v && typeof v === 'object' && !Array.isArray(v) && depth < 5)
      out[k] = redact(v as Record<string, unknown>, depth + 1);
    else out[k] = v;
  }
  return out;
}
