import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrl, DnsResolver, egressLookup, isEgressRefusal, type Resolver } from '@strata/egress';

export interface ReceiverClientOptions {
  readonly timeoutMs: number;
  readonly bodyMaxBytes: number;
  readonly allowPrivate: boolean;
  /** Sockets kept per receiver origin (keep-alive). */
  readonly maxSockets: number;
  /**
   * Name resolution: a `DnsResolver` of the client's own (c-ares with a timeout and a TTL
   * cache; `dns` for its servers, timeout and tries) unless given.
   */
  readonly resolve?: Resolver;
  /** The DNS servers and limits of the client's own resolver (the system's servers and the defaults unless given). */
  readonly dns?: { readonly servers?: readonly string[]; readonly timeoutMs?: number; readonly tries?: number };
}

/** What a receiver answered, or why no answer came. */
export type ReceiverResult =
  | { readonly kind: 'response'; readonly status: number; readonly body: string; readonly durationMs: number }
  | { readonly kind: 'error'; readonly error: string; readonly durationMs: number };

/**
 * Sends one webhook POST: no redirects followed (a 3xx is an answer like any
 * other), one deadline for the whole exchange, at most `bodyMaxBytes` of the
 * response read, and, unless private receivers are allowed, a refusal of any
 * receiver that is not a global unicast address (`@strata/egress`): the URL's
 * literal address or localhost name before anything is sent, and every address
 * a name resolves to, in the connection's own lookup, so DNS rebinding cannot
 * slip past.
 */
/**
 * How long an idle keep-alive socket to a receiver is kept: below the 5 s that
 * Node's own servers (and many others) keep an idle connection open.
 */
export const RECEIVER_IDLE_TIMEOUT_MS = 4000;

export class ReceiverClient {
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly lookup: LookupFunction;
  private readonly resolver: DnsResolver | undefined;

  constructor(private readonly options: ReceiverClientOptions) {
    // Idle sockets are closed after RECEIVER_IDLE_TIMEOUT_MS, or 1 s before the `Keep-Alive: timeout`
    // a receiver announces (Node honours that only when the agent has a timeout of its own): an
    // attempt sent on a socket the receiver was closing would fail with a reset and spend an attempt.
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, timeout: RECEIVER_IDLE_TIMEOUT_MS };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
    // Never getaddrinfo: it runs on the libuv thread pool with no timeout, so one slow receiver's DNS held up
    // every lookup (and file access) of the process.
    this.resolver = options.resolve ? undefined : new DnsResolver(options.dns ?? {});
    this.lookup = egressLookup({
      allowPrivate: options.allowPrivate,
      resolve: options.resolve ?? this.resolver!.lookup,
    });
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<ReceiverResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // Node never calls a lookup for an IP literal: the URL's host is checked here.
    const refused = checkUrl(url, { allowPrivate: this.options.allowPrivate });
    if (refused) return { kind: 'error', error: `Receiver refused: ${refused.reason}`, durationMs: 0 };
    try {
      const { status, text } = await this.exchange(new URL(url), headers, body);
      return { kind: 'response', status, body: text, durationMs: elapsed() };
    } catch (err) {
      return { kind: 'error', error: describeError(err, this.options.timeoutMs), durationMs: elapsed() };
    }
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
    this.resolver?.cancel();
  }

  private exchange(
    target: URL,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; text: string }> {
    const secure = target.protocol === 'https:';
    const request = secure ? https.request : http.request;
    const payload = Buffer.from(body, 'utf8');
    return new Promise((resolve, reject) => {
      const req = request(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(payload.length) },
          agent: secure ? this.agents.https : this.agents.http,
          signal: AbortSignal.timeout(this.options.timeoutMs),
          lookup: this.lookup,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const finish = () => {
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          };
          res.on('data', (chunk: Buffer) => {
            const room = this.options.bodyMaxBytes - size;
            if (room > 0) chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
            size += chunk.length;
            if (size > this.options.bodyMaxBytes) {
              // Enough read: stop the transfer rather than drain an endless body.
              res.destroy();
              finish();
            }
          });
          res.on('end', finish);
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `Timed out after ${timeoutMs} ms`;
  if (isEgressRefusal(err)) return `Receiver refused: ${err.message}`;
  const code = e?.code ? ` (${e.code})` : '';
  return `${e?.message ?? String(err)}${code}`;
}
