import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ErrorCode } from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';
import { undecodable } from './raw-body.js';
import { findFormTextProblems, findJsonProblems, MAX_JSON_DEPTH } from './text-checks.js';

export const JSON_TYPES = ['application/json', 'application/*+json'];
export const FORM_TYPE = 'application/x-www-form-urlencoded';

export interface BodyParsingOptions {
  /** Largest body accepted (after decompression). */
  readonly limit: string;
  /** Deepest nesting of a JSON body (objects and arrays; the body is level 1). */
  readonly maxDepth?: number;
  /** Paths whose routes take an HTML form (`application/x-www-form-urlencoded`) instead of JSON. */
  readonly formPaths?: RegExp | undefined;
}

/**
 * The platform's one body parser. A request without a body passes untouched
 * (routes that take none need no content type). A body must be JSON in UTF-8,
 * or a form on a form path; anything else is a 415, never a body silently left
 * unparsed. A JSON body is refused (400, naming the field) when its bytes are
 * not UTF-8, when it nests deeper than `maxDepth`, or when a string or key holds
 * NUL or a lone surrogate: all checked once, on the raw bytes, before the body
 * is parsed and before any transformer runs.
 */
export function bodyParsing(options: BodyParsingOptions): RequestHandler {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const json = express.json({ limit: options.limit, type: () => true, verify: refuseBadJson(maxDepth) });
  const form = express.urlencoded({ extended: false, limit: options.limit, type: () => true, verify: refuseBadForm });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) return next();
    const formRoute = options.formPaths?.test(req.path) ?? false;
    const parsed: NextFunction = (err?: unknown) => next(undecompressable(req, err) ?? err);
    if (req.is(JSON_TYPES)) {
      if (!isUtf8Charset(req)) return next(unsupportedCharset());
      json(req, res, parsed);
      return;
    }
    if (formRoute && req.is(FORM_TYPE)) {
      if (!isUtf8Charset(req)) return next(unsupportedCharset());
      form(req, res, parsed);
      return;
    }
    next(unsupportedMediaType(formRoute ? FORM_TYPE : 'application/json'));
  };
}

/**
 * Whether the request carries a body. A `Content-Length: 0` is no body (fetch
 * and curl send it on a bodiless POST), unlike type-is's `hasBody`.
 */
export function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

function isUtf8Charset(req: IncomingMessage): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

/**
 * For a route that reads its body raw (a signed webhook): a body that states a
 * content type must be JSON in UTF-8, as on every route the body parser serves
 * (415 otherwise); one that states none is taken as JSON.
 */
export function assertJsonBody(req: Request): void {
  if (!hasBody(req) || req.headers['content-type'] === undefined) return;
  if (!req.is(JSON_TYPES)) throw unsupportedMediaType('application/json');
  if (!isUtf8Charset(req)) throw unsupportedCharset();
}

function unsupportedCharset(): StrataException {
  return new StrataException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Request bodies must be encoded in UTF-8', [
    { field: 'Content-Type', message: 'charset must be utf-8' },
  ]);
}

/**
 * A body whose Content-Encoding does not decode (a corrupt or truncated gzip,
 * deflate or br stream): body-parser passes zlib's error on as a 400 without
 * one of its own `type`s, which the error filter would answer as a 500.
 */
function undecompressable(req: IncomingMessage, err: unknown): StrataException | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { status?: unknown; type?: unknown };
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (e.status !== 400 || e.type !== undefined || !encoding || encoding === 'identity') return undefined;
  return undecodable(encoding);
}

function unsupportedMediaType(expected: string): StrataException {
  return new StrataException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Content-Type must be ${expected}`, [
    { field: 'Content-Type', message: `must be ${expected}` },
  ]);
}

/** A `verify` hook: refuses bytes that are not UTF-8 instead of letting the decoder replace them with U+FFFD. */
function refuseInvalidUtf8(_req: IncomingMessage, _res: unknown, buf: Buffer): void {
  if (!isUtf8(buf)) {
    throw StrataException.validation(
      [{ field: 'body', message: 'is not valid UTF-8' }],
      'Request body is not valid UTF-8',
    );
  }
}

/** A `verify` hook, run on the raw bytes before they are parsed: UTF-8, then depth, NUL and lone surrogates. */
function refuseBadJson(maxDepth: number) {
  return (req: IncomingMessage, res: unknown, buf: Buffer): void => {
    refuseInvalidUtf8(req, res, buf);
    const problems = findJsonProblems(buf, maxDepth);
    if (problems.length > 0) throw StrataException.validation(problems, describe(problems));
  };
}

function refuseBadForm(req: IncomingMessage, res: unknown, buf: Buffer): void {
  refuseInvalidUtf8(req, res, buf);
  const problems = findFormTextProblems(buf.toString('utf8'));
  if (problems.length > 0) throw StrataException.validation(problems, describe(problems));
}

function describe(problems: { field: string; message: string }[]): string {
  const first = problems[0]!;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return `Invalid request body: ${first.field} ${first.message}${more}`;
}
