import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { checkUrl, DnsResolver, egressLookup, isEgressRefusal, parseDnsServers } from '@strata/egress';
import { ComputeConfig } from '../../compute.config.js';
import { ApiRefusal } from './handler.js';

export interface EgressRequest {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

export interface EgressResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** Request headers a function may not set: the client sets them, or they concern this hop only. */
const MANAGED_HEADERS = new Set([
  // The URL's host (api.fetch refuses a Host header before it gets here).
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
]);

/**
 * The worker's HTTP client for `api.fetch` and `api.httpPost`: only global
 * unicast destinations unless COMPUTE_FETCH_ALLOW_PRIVATE (the URL's literal
 * host before anything is sent, and every address a name resolves to in the
 * connection's own lookup, so DNS rebinding cannot slip past: @strata/egress),
 * no redirects followed, one deadline for the exchange, and a bounded response.
 * Names are resolved by c-ares with a timeout and a TTL cache (COMPUTE_FETCH_DNS_*),
 * never by getaddrinfo on the libuv thread pool, where one tenant's slow DNS held up
 * every lookup of the worker.
 */
@Injectable()
export class HttpEgress implements OnApplicationShutdown {
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly resolver: DnsResolver;
  private readonly lookup: LookupFunction;

  constructor(private readonly config: ComputeConfig) {
    const options = { keepAlive: true, maxSockets: 64, timeout: 4000 };
    this.agents = { http: new http.Agent(options), https: new https.Agent(options) };
    this.resolver = new DnsResolver({
      servers: parseDnsServers(config.COMPUTE_FETCH_DNS_SERVERS),
      timeoutMs: config.COMPUTE_FETCH_DNS_TIMEOUT_MS,
      tries: config.COMPUTE_FETCH_DNS_TRIES,
    });
    this.lookup = egressLookup({ allowPrivate: config.COMPUTE_FETCH_ALLOW_PRIVATE, resolve: this.resolver.lookup });
  }

  onApplicationShutdown(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
    this.resolver.cancel();
  }

  async exchange(url: URL, request: EgressRequest, signal: AbortSignal): Promise<EgressResponse> {
    const refused = checkUrl(url, { allowPrivate: this.config.COMPUTE_FETCH_ALLOW_PRIVATE });
    if (refused) throw new ApiRefusal(`the URL ${refused.reason}`);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !MANAGED_HEADERS.has(name.toLowerCase())),
    );
    const secure = url.protocol === 'https:';
    const send = secure ? https.request : http.request;
    const max = this.config.COMPUTE_FETCH_MAX_BYTES;
    const timeout = AbortSignal.timeout(this.config.COMPUTE_FETCH_TIMEOUT_MS);
    try {
      return await new Promise<EgressResponse>((resolve, reject) => {
        const req = send(
          url,
          {
            method: request.method,
            headers: { ...headers, ...(request.body ? { 'content-length': String(request.body.length) } : {}) },
            agent: secure ? this.agents.https : this.agents.http,
            signal: AbortSignal.any([signal, timeout]),
            lookup: this.lookup,
          },
          (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > max) {
                res.destroy();
                reject(new ApiRefusal(`the response is larger than ${max} bytes`));
                return;
              }
              chunks.push(chunk);
            });
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                headers: Object.fromEntries(
                  Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
                ),
                body: Buffer.concat(chunks),
              }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(request.body);
      });
    } catch (err) {
      // Node reports an abort by either signal as an AbortError: which one fired says what happened.
      const timedOut = timeout.aborted && !signal.aborted;
      throw new ApiRefusal(describe(err, timedOut, this.config.COMPUTE_FETCH_TIMEOUT_MS), { cause: err });
    }
  }
}

function describe(err: unknown, timedOut: boolean, timeoutMs: number): string {
  const e = err as NodeJS.ErrnoException;
  if (timedOut || e?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (e?.name === 'AbortError') return 'the run ended before the answer came';
  if (isEgressRefusal(err)) return `refused: ${err.message}`;
  return `${e?.message ?? String(err)}${e?.code ? ` (${e.code})` : ''}`;
}
