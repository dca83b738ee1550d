import { Resource, segment, type CallOptions } from '../http/resource.js';
import { toSearchParams, type Query } from '../http/transport.js';

/** How an endpoint call proves who makes it: one of the endpoint trigger's auth modes (docs/compute.md). */
export type EndpointAuth =
  /** The client's bearer token (the default): its groups must grant `function-triggers:execute`. */
  | 'bearer'
  /** No credential: a `public` endpoint. */
  | 'none'
  /** `x-api-key`, the key issued with the trigger (`sek_…`). */
  | { readonly apiKey: string }
  /** HMAC-SHA256 with the trigger's signing secret (`ses_…`), a new signature per call. */
  | { readonly signingSecret: string };

export interface EndpointCall extends CallOptions {
  /** Default POST. */
  readonly method?: string;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Sent as is, with `contentType` (default `text/plain; charset=utf-8`), instead of `body`. */
  readonly text?: string;
  readonly contentType?: string;
  readonly query?: Query;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default 'bearer'. */
  readonly auth?: EndpointAuth;
}

/** What the endpoint's function answered (a status of 400 or more throws StrataApiError, the function's or the platform's). */
export interface EndpointResponse<T> {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, text, or undefined when empty. */
  readonly body: T;
  /** `x-strata-run-id`: the run that answered (`functionRuns.get`). */
  readonly runId: string | undefined;
}

/**
 * `{data_base}/endpoints/{path}`: calls an endpoint trigger and answers what its
 * function answered. A signed call is never retried (the platform accepts a
 * signature once; call again to sign again); the others are retried as every
 * call is (a 429 after its `Retry-After`; a POST is not retried on a 5xx).
 */
export class Endpoints extends Resource {
  async invoke<T = unknown>(path: string, call: EndpointCall = {}): Promise<EndpointResponse<T>> {
    const method = (call.method ?? 'POST').toUpperCase();
    const search = call.query ? toSearchParams(call.query).toString() : '';
    const target = `/endpoints/${segment(path)}${search ? `?${search}` : ''}`;
    const text = call.text ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    const contentType =
      call.text !== undefined ? (call.contentType ?? 'text/plain; charset=utf-8') : 'application/json';
    const auth = call.auth ?? 'bearer';
    const headers: Record<string, string> = { ...call.headers };
    if (text !== undefined) headers['content-type'] = contentType;
    if (typeof auth === 'object' && 'apiKey' in auth) headers['x-api-key'] = auth.apiKey;
    if (typeof auth === 'object' && 'signingSecret' in auth) {
      Object.assign(headers, await signEndpointCall(auth.signingSecret, method, target, text ?? ''));
    }
    const answer = await this.transport.exchange<T>(method, `${this.base}${target}`, {
      headers,
      ...(text !== undefined ? { text } : {}),
      ...(auth === 'bearer' ? {} : { bearer: false }),
      ...(typeof auth === 'object' && 'signingSecret' in auth ? { retry: false } : {}),
      signal: call.signal,
    });
    return { ...answer, runId: answer.headers.get('x-strata-run-id') ?? undefined };
  }
}

/**
 * The headers of an HMAC-signed endpoint call (docs/compute.md, "Auth modes"):
 * `x-signature-timestamp` (Unix seconds) and `x-signature: sha256=<hex>` of
 * HMAC-SHA256 over `{timestamp}.{METHOD}.{target}.{raw body}`, `target` being
 * `/endpoints/{path}` and the query string exactly as sent.
 */
export async function signEndpointCall(
  secret: string,
  method: string,
  target: string,
  rawBody: string,
  now: Date = new Date(),
): Promise<{ 'x-signature-timestamp': string; 'x-signature': string }> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(`${timestamp}.${method}.${target}.${rawBody}`));
  const hex = Array.from(new Uint8Array(mac), (byte) => byte.toString(16).padStart(2, '0')).join('');
  return { 'x-signature-timestamp': timestamp, 'x-signature': `sha256=${hex}` };
}
