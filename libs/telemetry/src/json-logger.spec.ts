import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT, context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonLogger, redact } from './json-logger.js';

function capture(level?: 'log' | 'warn'): { logger: JsonLogger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = new JsonLogger('data', level, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { logger, lines };
}

describe('JsonLogger', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => context.disable());

  it('writes one JSON object a line with the trace and span ids of the active span', () => {
    const { logger, lines } = capture();
    const spanContext = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED };
    context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext), () => logger.log('record created', 'Records'));
    logger.log('outside any trace');
    expect(lines[0]).toMatchObject({
      level: 'log',
      service: 'data',
      context: 'Records',
      msg: 'record created',
      trace_id: 'a'.repeat(32),
      span_id: 'b'.repeat(16),
    });
    expect(typeof lines[0]!['time']).toBe('string');
    expect(lines[1]).not.toHaveProperty('trace_id');
  });

  it('never writes a secret, at any depth', () => {
    const { logger, lines } = capture();
    logger.warn({
      msg: 'token request',
      clientSecret: 'sk_live',
      headers: { authorization: 'Bearer x', 'x-request-id': 'r1' },
      password: 'p',
    });
    const text = JSON.stringify(lines[0]);
    expect(text).not.toMatch(/sk_live|Bearer x|"p"/);
    expect(lines[0]).toMatchObject({
      msg: 'token request',
      headers: { authorization: '[redacted]', 'x-request-id': 'r1' },
    });
  });

  it('keeps errors with their stack and drops levels below the minimum', () => {
    const { logger, lines } = capture('warn');
    logger.log('too chatty');
    logger.error(new Error('boom'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', msg: 'boom' });
    expect(String(lines[0]!['stack'])).toContain('Error: boom');
  });

  it('leaves out the stack Nest passes as undefined for an error logged as an object', () => {
    const { logger, lines } = capture();
    logger.error({ msg: 'run outcome lost', runId: 'r1' }, undefined, 'RunExecutor');
    expect(lines[0]).toEqual({
      time: expect.any(String),
      level: 'error',
      service: 'data',
      context: 'RunExecutor',
      msg: 'run outcome lost',
      runId: 'r1',
    });
  });

  it('redacts secret-looking keys but leaves the rest alone', () => {
    expect(redact({ apiKey: 'k', privateJwk: { d: 'x' }, count: 3, nested: { cookie: 'c', ok: true } })).toEqual({
      apiKey: '[redacted]',
      privateJwk: '[redacted]',
      count: 3,
      nested: { cookie: '[redacted]', ok: true },
    });
  });
});
