import { describe, expect, it } from '@jest/globals';
import { BadRequestException, HttpException, type ArgumentsHost } from '@nestjs/common';
import { ErrorCode, type ErrorShape } from '@strata/contracts';
import { ErrorFilter } from './error.filter.js';
import { StrataException } from './strata.exception.js';

interface Answer {
  status: number;
  body: unknown;
}

/** Runs the filter on one error for a request at `path`, as Express would hand them over. */
function answer(error: unknown, shape: ErrorShape = 'general'): Answer {
  const out: Answer = { status: 0, body: undefined };
  const res = {
    headersSent: false,
    setHeader: () => undefined,
    status(code: number) {
      out.status = code;
      return this;
    },
    json(body: unknown) {
      out.body = body;
      return this;
    },
  };
  const req = { path: '/x', method: 'GET', headers: {} };
  const host = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ArgumentsHost;
  const filter = new ErrorFilter(() => shape);
  // The filter logs 5xx answers; keep the test output quiet.
  (filter as unknown as { logger: { error: () => void; warn: () => void } }).logger = {
    error: () => undefined,
    warn: () => undefined,
  };
  filter.catch(error, host);
  return out;
}

/** An error shaped like body-parser's (http-errors): a status, an expose flag, a type. */
function bodyParserError(type: string, status: number, message: string): Error {
  return Object.assign(new Error(message), { type, status, statusCode: status, expose: status < 500 });
}

describe('ErrorFilter', () => {
  it('logs a 5xx it was asked to answer as a warning, and an unexpected failure as an error with its stack', () => {
    const logged: { level: string; entry: Record<string, unknown> }[] = [];
    const res = { headersSent: false, status: () => res, json: () => res, setHeader: () => res };
    const host = {
      switchToHttp: () => ({ getRequest: () => ({ path: '/x', method: 'POST', headers: {} }), getResponse: () => res }),
    } as unknown as ArgumentsHost;
    const filter = new ErrorFilter();
    (filter as unknown as { logger: unknown }).logger = {
      error: (entry: Record<string, unknown>) => logged.push({ level: 'error', entry }),
      warn: (entry: Record<string, unknown>) => logged.push({ level: 'warn', entry }),
    };
    filter.catch(new StrataException(ErrorCode.UNAVAILABLE, 'No compute worker is free'), host);
    filter.catch(new Error('relation "x" does not exist'), host);
    filter.catch(StrataException.notFound('Run not found'), host);
    expect(logged).toEqual([
      {
        level: 'warn',
        entry: expect.objectContaining({ status: 503, code: 'UNAVAILABLE', err: 'No compute worker is free' }),
      },
      {
        level: 'error',
        entry: expect.objectContaining({ err: expect.objectContaining({ stack: expect.any(String) }) }),
      },
    ]);
  });

  it('keeps an unknown error a 500 with the request id, whatever status or type it carries', () => {
    for (const unknown of [
      new Error('relation "x" does not exist'),
      Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' }),
      Object.assign(new Error('looks like a client error'), { status: 400, type: 'something.else' }),
      bodyParserError('stream.not.readable', 500, 'stream is not readable'),
      // Nest wraps any middleware error carrying a 4xx status; a library's is still unknown.
      new HttpException('Bad Request', 400, { cause: Object.assign(new Error('lib'), { statusCode: 400 }) }),
      'a thrown string',
    ]) {
      expect(answer(unknown)).toMatchObject({ status: 500, body: { code: 'INTERNAL' } });
    }
  });

  it('renders a domain error that a middleware passed on, even when Nest wrapped it in an HttpException', () => {
    const domain = StrataException.validation([{ field: 'body', message: 'is not valid UTF-8' }], 'Bad body');
    const wrapped = new HttpException('Bad body', 400, { cause: domain });
    for (const error of [domain, wrapped]) {
      expect(answer(error, 'records')).toEqual({
        status: 400,
        body: {
          error: {
            code: 'VALIDATION_ERROR',
            message: 'Bad body',
            details: [{ field: 'body', message: 'is not valid UTF-8' }],
          },
        },
      });
    }
  });

  it("maps body-parser's own client errors, wrapped or not", () => {
    const tooLarge = bodyParserError('entity.too.large', 413, 'request entity too large');
    expect(answer(tooLarge)).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
    const parse = new BadRequestException('Unexpected token', {
      cause: bodyParserError('entity.parse.failed', 400, 'Unexpected token'),
    });
    expect(answer(parse)).toMatchObject({
      status: 400,
      body: {
        code: 'VALIDATION_ERROR',
        message: 'Request body is not valid JSON',
        details: [{ field: 'body', message: 'Request body is not valid JSON: Unexpected token' }],
      },
    });
  });
});
