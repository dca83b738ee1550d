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
  /**
   * Retry a 429 (after its Retry-After), and a 5xx of a GET, as other calls are. Off by
   * default: the platform passes the function's own status through, so a retry would run the
   * function again for a 429 or 503 it answered itself. Never for a signed call.
   */
  readonly retry?: boolean;
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
 * function answered. Not retried unless asked (`retry: true`), and a signed call
 * never: the platform accepts a signature once, so each call signs anew.
 */
export class Endpoints extends Resource {
  /** The second of the last signature of each signing input: an identical call waits for the next second. */
  private readonly lastSigned = new Map<string, number>();

  async invoke<T = unknown>(path: string, call: EndpointCall = {}): Promise<EndpointResponse<T>> {
    const method = (call.method ?? 'POST').toUpperCase();
    const text = call.text ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    if (text !== undefined && (method === 'GET' || method === 'HEAD')) {
      throw new TypeError(`endpoints.invoke: a ${method} call carries no body`);
    }
    const search = call.query ? toSearchParams(call.query).toString() : '';
    const target = `/endpoints/${segment(path.replace(/^\/+/, ''))}${search ? `?${search}` : ''}`;
    const auth = call.auth ?? 'bearer';
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(call.headers ?? {})) headers[name.toLowerCase()] = value;
    if (text !== undefined) {
      headers['content-type'] =
        call.contentType ??
        headers['content-type'] ??
        (call.text !== undefined ? 'text/plain; charset=utf-8' : 'application/json');
    }
    if (typeof auth === 'object' && 'apiKey' in auth) headers['x-api-key'] = auth.apiKey;
    const signed = typeof auth === 'object' && 'signingSecret' in auth;
    if (signed) {
      const at = await this.secondToSignIn(`${auth.signingSecret}\n${method}\n${target}\n${text ?? ''}`, call.signal);
      Object.assign(headers, await signEndpointCall(auth.signingSecret, method, target, text ?? '', at));
    }
    const answer = await this.transport.exchange<T>(method, `${this.base}${target}`, {
      headers,
      ...(text !== undefined ? { text } : {}),
      ...(auth === 'bearer' ? {} : { bearer: false }),
      ...(signed || call.retry !== true ? { retry: false } : {}),
      signal: call.signal,
    });
    return { ...answer, runId: answer.headers.get('x-strata-run-id') ?? undefined };
  }

  /**
   * When to sign: now, unless this client signed the same input in the current
   * second, whose signature the platform would refuse as a replay; then at the
   * start of the next second, after waiting for it.
   */
  private async secondToSignIn(input: string, signal: AbortSignal | undefined): Promise<Date> {
    const key = await digest(input);
    for (;;) {
      const now = Date.now();
      const second = Math.floor(now / 1000);
      if (this.lastSigned.get(key) !== second) {
        this.lastSigned.set(key, second);
        // Older seconds are of no use to anyone: the map holds this second's inputs.
        for (const [k, s] of this.lastSigned) if (s < second) this.lastSigned.delete(k);
        return new Date(now);
      }
      signal?.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, (second + 1) * 1000 - now));
    }
  }
}

/** The SHA-256 of a signing input, as the key of `lastSigned` (the secret is in it: never kept in the clear). */
async function digest(input: string): Promise<string> {
  const bytes = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(input));
  return Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * The headers of an HMAC-signed endpoint call (docs/compute.md, "Auth modes"):
 * `x-signature-timestamp` (Unix seconds) and `x-signature: sha256=<hex>` of
 * HMAC-SHA256 over `{timestamp}.{METHOD}.{target length}:{target}.{raw body}`, `target`
 * being `/endpoints/{path}` and the query string exactly as sent, and its length the
 * number of its UTF-8 bytes (so the boundary between target and body cannot be moved).
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
  const targetBytes = encoder.encode(target).length;
  const mac = await crypto.subtle.sign(
    'HMAC',
    key,
    encoder.encode(`${timestamp}.${method}.${targetBytes}:${target}.${rawBody}`),
  );
  const hex = Array.from(new Uint8Array(mac), (byte) => byte.toString(16).padStart(2, '0')).join('');
  return { 'x-signature-timestamp': timestamp, 'x-signature': `sha256=${hex}` };
}
