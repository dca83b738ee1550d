import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { findFormTextProblems, findPathProblems, textProblem } from '@strata/platform';

/** Largest form the token endpoint reads. */
const TOKEN_FORM_LIMIT = '16kb';

/** body-parser's client errors: the form could not be read as the caller sent it. */
const FORM_ERRORS = new Set([
  'entity.parse.failed',
  'entity.too.large',
  'entity.verify.failed',
  'charset.unsupported',
  'encoding.unsupported',
  'parameters.too.many',
  'request.aborted',
  'request.size.invalid',
]);

class MalformedOAuthInput extends Error {
  readonly status = 400;
  readonly type = 'entity.verify.failed';
}

/**
 * `{auth_url}/oidc/*` is served by oidc-provider, outside the platform's
 * checks: a URL or token form that is not well-formed percent-encoded UTF-8, or
 * that holds NUL, is answered here as the OAuth error `invalid_request` (400),
 * naming the parameter, instead of reaching the database as a `server_error`.
 */
export function refuseMalformedOAuthUrl(req: Request, res: Response, next: NextFunction): void {
  const url = req.originalUrl;
  if (!url.includes('%')) return next();
  const q = url.indexOf('?');
  const problem = [
    ...findPathProblems(q === -1 ? url : url.slice(0, q)),
    ...(q === -1 ? [] : findFormTextProblems(url.slice(q + 1))),
  ][0];
  if (!problem) return next();
  invalidRequest(res, `${problem.field} ${problem.message}`);
}

/** The token endpoint's form parser, checking the form as {@link refuseMalformedOAuthUrl} checks URLs. */
export function tokenFormParser(): [RequestHandler, ErrorRequestHandler] {
  const parse = express.urlencoded({ extended: false, limit: TOKEN_FORM_LIMIT, verify: verifyForm });
  const answer: ErrorRequestHandler = (err: unknown, _req, res, next): void => {
    const type = (err as { type?: unknown } | undefined)?.type;
    if (typeof type !== 'string' || !FORM_ERRORS.has(type)) return next(err);
    invalidRequest(res, err instanceof Error ? err.message : 'the form could not be read');
  };
  return [parse, answer];
}

function verifyForm(_req: IncomingMessage, _res: unknown, buf: Buffer): void {
  if (!isUtf8(buf)) throw new MalformedOAuthInput('the form is not valid UTF-8');
  const problem = findFormTextProblems(buf.toString('utf8'))[0];
  if (problem) throw new MalformedOAuthInput(`${problem.field} ${problem.message}`);
}

function invalidRequest(res: Response, description: string): void {
  res.status(400).set('Cache-Control', 'no-store').json({ error: 'invalid_request', error_description: description });
}

/**
 * Whether an identifier oidc-provider looks up (client id, code, uid) could be
 * stored at all: one with NUL or a lone surrogate cannot, and PostgreSQL would
 * refuse the query. Such a lookup finds nothing (the provider then answers
 * `invalid_client` or `invalid_grant`).
 */
export function isStorableId(id: string): boolean {
  return textProblem(id) === undefined;
}
