import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { codeOfStatus, ErrorCode, type ErrorShape, type FieldError } from '@strata/contracts';
import { StrataException } from './strata.exception.js';
import { renderError, statusInShape, type RenderableError } from './render-error.js';
import { requestIdOf } from '../http/request-id.middleware.js';

/** Where the shape chosen for a request is kept once its handler is known. */
export const SHAPE_ON_REQUEST = Symbol('strata:error-shape');

type ShapedRequest = Request & { [SHAPE_ON_REQUEST]?: ErrorShape };

/**
 * Turns every error into the specification's body shape. Domain errors keep
 * their code; framework HTTP errors map by status; anything else is a 500 with
 * the request id and is logged with its stack.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  constructor(private readonly defaultShape: (path: string) => ErrorShape = () => 'general') {}

  catch(thrown: unknown, host: ArgumentsHost): void {
    const exception = unwrap(thrown);
    const http = host.switchToHttp();
    const req = http.getRequest<ShapedRequest>();
    const res = http.getResponse<Response>();
    const requestId = requestIdOf(req);
    const raised = toRenderable(exception, requestId);
    const shape = req[SHAPE_ON_REQUEST] ?? this.defaultShape(req.path);
    const error = { ...raised, status: statusInShape(shape, raised) };
    logFailure(this.logger, exception, error, { requestId, path: req.path, method: req.method });
    if (res.headersSent) {
      res.end();
      return;
    }
    if (exception instanceof StrataException && exception.headers) {
      for (const [k, v] of Object.entries(exception.headers)) res.setHeader(k, v);
    }
    res.status(error.status).json(renderError(shape, error));
  }
}

/**
 * Logs a failed request that answers 5xx. A 5xx our code chose to answer
 * (compute unavailable, an endpoint's timeout or its function failing) is
 * expected in operation: a warning without a stack. Anything else is a bug: an
 * error with its stack.
 */
export function logFailure(
  logger: Pick<Logger, 'warn' | 'error'>,
  exception: unknown,
  error: RenderableError,
  request: { readonly requestId: string | undefined; readonly path: string; readonly method: string | undefined },
): void {
  if (error.status < 500) return;
  const entry = { msg: 'request failed', ...request };
  if (exception instanceof StrataException) {
    logger.warn({ ...entry, status: error.status, code: error.code, err: exception.message });
  } else logger.error({ ...entry, err: describe(exception) });
}

/** What a thrown value answers: domain errors keep their code, framework HTTP errors map by status, the rest is a 500. */
export function toRenderable(exception: unknown, requestId: string | undefined): RenderableError {
  if (exception instanceof StrataException) {
    return {
      status: exception.status,
      code: exception.code,
      message: exception.message,
      details: exception.details,
      requestId,
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return { status, code: codeOfStatus(status), message: messageOf(exception), requestId };
  }
  const bodyParser = bodyParserError(exception);
  if (bodyParser) return { ...bodyParser, requestId };
  return {
    status: 500,
    code: ErrorCode.INTERNAL,
    message: `Internal server error${requestId ? ` (request id ${requestId})` : ''}`,
    requestId,
  };
}

/**
 * Nest's Express adapter wraps an error passed on by a middleware that carries
 * an HTTP status (body-parser's, or ours thrown in its `verify` hook) in an
 * HttpException; the original, kept as its cause, knows the code and fields.
 * A wrapped error of any other kind is not known to be the caller's fault: it
 * is answered as itself (a 500), whatever status it claimed. Only the router's
 * own undecodable path parameter keeps its 400.
 */
function unwrap(exception: unknown): unknown {
  if (!(exception instanceof HttpException) || exception.cause === undefined) return exception;
  const cause = exception.cause;
  if (cause instanceof StrataException || bodyParserError(cause)) return cause;
  return cause instanceof URIError ? exception : cause;
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}

/**
 * The client errors body-parser raises (its `type`s), by name: an error of any
 * other kind, whatever status it carries, is not known to be the caller's fault
 * and stays a 500.
 */
const BODY_PARSER_CLIENT_ERRORS = new Set([
  'entity.parse.failed',
  'entity.too.large',
  'entity.verify.failed',
  'charset.unsupported',
  'encoding.unsupported',
  'parameters.too.many',
  'querystring.parse.rangeError',
  'request.aborted',
  'request.size.invalid',
]);

/** Errors raised by the JSON / urlencoded body parsers (malformed JSON, too large, bad charset). */
function bodyParserError(exception: unknown): Omit<RenderableError, 'requestId'> | undefined {
  if (!exception || typeof exception !== 'object') return undefined;
  const e = exception as { type?: unknown; status?: unknown; message?: unknown };
  if (typeof e.type !== 'string' || typeof e.status !== 'number') return undefined;
  if (!BODY_PARSER_CLIENT_ERRORS.has(e.type) || e.status < 400 || e.status >= 500) return undefined;
  const details: FieldError[] = [{ field: 'body', message: String(e.message) }];
  switch (e.type) {
    case 'entity.parse.failed': {
      // Valid JSON that is not an object or array ("str", 5, null) is refused by the strict parser
      // with JSON.parse's own words, as if it were malformed: say what it is instead.
      const kind = topLevelKind((exception as { body?: unknown }).body);
      if (kind !== undefined) {
        return {
          status: 400,
          code: ErrorCode.VALIDATION_ERROR,
          message: 'Request body must be a JSON object or array',
          details: [{ field: 'body', message: `The body must be a JSON object or array, not ${kind}.` }],
        };
      }
      // The parser's own words say where; the field message says what, in every error shape.
      return {
        status: 400,
        code: ErrorCode.VALIDATION_ERROR,
        message: 'Request body is not valid JSON',
        details: [{ field: 'body', message: `Request body is not valid JSON: ${String(e.message)}` }],
      };
    }
    case 'entity.too.large':
      return { status: 413, code: ErrorCode.PAYLOAD_TOO_LARGE, message: 'Request body is too large' };
    default:
      return { status: e.status, code: codeOfStatus(e.status), message: String(e.message), details };
  }
}

/** What a body that parses as JSON holds at its top ('a string', 'null', …); undefined when it does not parse. */
function topLevelKind(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (value === null) return 'null';
  if (typeof value === 'object') return undefined;
  return typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : 'a string';
}

function describe(exception: unknown): Record<string, unknown> {
  if (exception instanceof Error) return { name: exception.name, message: exception.message, stack: exception.stack };
  return { value: String(exception) };
}
