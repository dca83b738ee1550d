import ky, { isHTTPError, isNetworkError, type KyInstance } from 'ky';
import { toApiError } from './api-error.js';
import type { TokenSource } from './token-source.js';

/** A query parameter: arrays repeat the name; undefined and null leave it out. */
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number)[];
export type Query = Readonly<Record<string, QueryValue>>;

export interface RequestOptions {
  readonly query?: Query | undefined;
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** `Idempotency-Key`: a repeat inside the platform's window answers the first response; such a POST is also retried on 5xx. */
  readonly idempotencyKey?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Sent as is instead of `body` as JSON (the caller sets `content-type`): the bytes a signature covers. */
  readonly text?: string | undefined;
  /** false: no bearer token (a call authenticated otherwise, or not at all), and no token renewal on a 401. */
  readonly bearer?: boolean | undefined;
  /** false: never retried (a signed call: the platform accepts a signature once). */
  readonly retry?: boolean | undefined;
}

/** Whether a request's options let the bearer token go with it (ky's per-request `context`). */
const sendsBearer = (context: Record<string, unknown>): boolean => context['bearer'] !== false;

/** A deprecated route's answer (`Deprecation`, `Sunset`, `Link` headers), or a deprecated client member used. */
export type DeprecationNotice =
  | {
      readonly kind: 'route';
      readonly method: string;
      readonly url: string;
      readonly sunset: string | undefined;
      readonly successor: string | undefined;
    }
  | { readonly kind: 'name'; readonly name: string; readonly successor: string; readonly since: string };

/** The default: one process `DeprecationWarning` per route or name. */
export function warnOncePerDeprecation(): (notice: DeprecationNotice) => void {
  const warned = new Set<string>();
  return (notice) => {
    const key = notice.kind === 'route' ? `${notice.method} ${new URL(notice.url).pathname}` : notice.name;
    if (warned.has(key)) return;
    warned.add(key);
    if (notice.kind === 'name') {
      process.emitWarning(
        `${notice.name} is deprecated since ${notice.since}; use ${notice.successor}`,
        'DeprecationWarning',
      );
      return;
    }
    // The route, or something the request used on it (a legacy field): the answer says which by its Link.
    const when = notice.sunset ? ` (sunset ${notice.sunset})` : '';
    const see = notice.successor ? `; see ${notice.successor}` : '';
    process.emitWarning(`${key} answered Deprecation: true${when}${see}`, 'DeprecationWarning');
  };
}

export interface RetryPolicy {
  /** Retries after the first attempt. Default 2; 0 turns retrying off. */
  readonly limit?: number;
  /** The longest `Retry-After` waited for; a longer one is cut to this. Default 60 000 ms. */
  readonly maxRetryAfterMs?: number;
  /** The longest backoff between attempts without `Retry-After`. Default 10 000 ms. */
  readonly backoffLimitMs?: number;
}

export interface TransportOptions {
  /** Where the bearer token comes from; none for unauthenticated calls. */
  readonly tokens?: TokenSource | undefined;
  readonly retry?: RetryPolicy | undefined;
  /** Per attempt. Default 30 000 ms. */
  readonly timeoutMs?: number | undefined;
  /** Told of every answer of a deprecated route (and, by the client, of deprecated names used). Default: one process warning each. */
  readonly onDeprecation?: ((notice: DeprecationNotice) => void) | undefined;
  /** The fetch to use (a proxy agent's, say). Default the global one. */
  readonly fetch?: typeof fetch | undefined;
}

/**
 * Methods whose repeat changes nothing: retried on 5xx and lost connections without a key.
 * PUT and DELETE are not among them here: a repeated `PUT /records/{id}` writes another
 * version, a repeated DELETE answers 404 for a delete that happened.
 */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * HTTP to one origin: JSON in and out, the bearer token, retries as the spec advises
 * ("retry 429, 5xx and 503 with backoff; do not retry other 4xx"), answers of 400 or more
 * thrown as StrataApiError.
 *
 * A 429 is retried whatever the method (the platform refused it before doing anything),
 * after its `Retry-After`. A 5xx or a lost connection is retried only for GET, HEAD and
 * OPTIONS, and for requests with an `Idempotency-Key` or an `If-Match`: any other write may
 * have been carried out before its answer was lost. A 401 is retried once with a renewed
 * token when the source can renew.
 */
export class Transport {
  private readonly http: KyInstance;
  constructor(
    readonly origin: string,
    options: TransportOptions = {},
  ) {
    const tokens = options.tokens;
    const retry = options.retry ?? {};
    const onDeprecation = options.onDeprecation ?? warnOncePerDeprecation();
    this.http = ky.create({
      baseUrl: origin.replace(/\/+$/, '') + '/',
      timeout: options.timeoutMs ?? 30_000,
      throwHttpErrors: false,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      retry: {
        limit: retry.limit ?? 2,
        methods: ['get', 'put', 'head', 'delete', 'options', 'post', 'patch'],
        statusCodes: [429, 500, 502, 503, 504],
        afterStatusCodes: [429, 503],
        maxRetryAfter: retry.maxRetryAfterMs ?? 60_000,
        backoffLimit: retry.backoffLimitMs ?? 10_000,
        jitter: true,
        // `undefined` leaves the decision to ky's own checks (the status codes above, and the wait
        // `Retry-After` asks for); `true` would retry at once on the plain backoff.
        shouldRetry: ({ error, retryCount }) => {
          const request = (error as { request?: Request }).request;
          const repeatable =
            request !== undefined &&
            (SAFE.has(request.method) || request.headers.has('idempotency-key') || request.headers.has('if-match'));
          if (isHTTPError(error)) {
            const status = error.response.status;
            if (status === 401) {
              return tokens?.renewable === true && retryCount === 1 && sendsBearer(error.options.context);
            }
            if (status === 429) return undefined;
            return status >= 500 && status !== 501 && repeatable ? undefined : false;
          }
          return isNetworkError(error) && repeatable ? undefined : false;
        },
      },
      hooks: {
        beforeRequest: [
          async ({ request, options }) => {
            if (tokens && sendsBearer(options.context)) {
              request.headers.set('authorization', `Bearer ${await tokens.token()}`);
            }
          },
        ],
        beforeRetry: [
          async ({ request, error, options }) => {
            if (tokens && sendsBearer(options.context) && isHTTPError(error) && error.response.status === 401) {
              tokens.invalidate();
              request.headers.set('authorization', `Bearer ${await tokens.token()}`);
            }
          },
        ],
        afterResponse: [
          ({ request, response }) => {
            if (response.headers.has('deprecation')) {
              onDeprecation({
                kind: 'route',
                method: request.method,
                url: request.url,
                sunset: response.headers.get('sunset') ?? undefined,
                successor: successorOf(response.headers.get('link')),
              });
            }
          },
        ],
      },
    });
  }

  /** The answer's body (parsed JSON, text, or undefined when empty); StrataApiError for 400 or more. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.exchange<T>(method, path, options)).body;
  }

  /** Status, headers and body of a successful answer; StrataApiError for 400 or more. */
  async exchange<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ status: number; headers: Headers; body: T }> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    let response: Response;
    let body: unknown;
    try {
      response = await this.http(path.replace(/^\/+/, ''), {
        method,
        headers,
        // ky retries only what it throws: the answers worth a retry are thrown, the rest read below.
        throwHttpErrors: (status) => status === 401 || status === 429 || status >= 500,
        ...(options.query ? { searchParams: toSearchParams(options.query) } : {}),
        ...(options.text !== undefined
          ? { body: options.text }
          : options.body !== undefined
            ? { json: options.body }
            : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.bearer === false ? { context: { bearer: false } } : {}),
        ...(options.retry === false ? { retry: { limit: 0 } } : {}),
      });
      body = await readBody(response);
    } catch (error) {
      // Retries used up (or none allowed): the last answer is the one to report. ky has read its body.
      if (!isHTTPError(error)) throw error;
      response = error.response;
      body = error.data;
    }
    if (response.status >= 400) {
      throw toApiError({ method, url: response.url || `${this.origin}${path}` }, response, body);
    }
    return { status: response.status, headers: response.headers, body: body as T };
  }
}

/** A query as URL search parameters: arrays repeat the name; undefined and null leave it out. */
export function toSearchParams(query: Query): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value))
      for (const item of value as readonly (string | number)[]) params.append(name, String(item));
    else params.append(name, String(value));
  }
  return params;
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text.length === 0) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('json')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The URL of `Link: <url>; rel=successor-version`. */
function successorOf(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="?successor-version"?/i.exec(part);
    if (match) return match[1];
  }
  return undefined;
}
