import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { Resolver as CaresResolver } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Name resolution answering every address (dns.lookup with `all: true` has this shape). */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface DnsResolverOptions {
  /**
   * DNS servers to ask (`1.2.3.4`, `1.2.3.4:5353`, `2001:db8::1`, `[2001:db8::1]:5353`);
   * the system's (`/etc/resolv.conf`) when absent or empty.
   */
  readonly servers?: readonly string[];
  /** How long each try of a query waits for an answer, in milliseconds. */
  readonly timeoutMs?: number;
  /** How many times each server is tried before the lookup fails with a timeout. */
  readonly tries?: number;
  /** Answers kept at once (a name's A and AAAA answers are two); the least recently used goes first. */
  readonly cacheSize?: number;
  /** Longest an answer is kept, whatever TTL it came with, in seconds. */
  readonly maxTtlSeconds?: number;
  /** How long "no such name" or "no address of this family" is kept, in seconds (at most its own TTL cap). */
  readonly negativeTtlSeconds?: number;
  /** Milliseconds since some epoch (the cache's clock; `performance.now` unless given). */
  readonly now?: () => number;
}

export const DNS_DEFAULTS = {
  timeoutMs: 2000,
  tries: 2,
  cacheSize: 1000,
  maxTtlSeconds: 300,
  negativeTtlSeconds: 30,
} as const;

/** A lookup that got no answer in time; `code` is `ETIMEOUT`, as c-ares names it. */
export class DnsTimeoutError extends Error {
  readonly code = 'ETIMEOUT';

  constructor(
    readonly hostname: string,
    timeoutMs: number,
    tries: number,
  ) {
    super(
      `DNS lookup of ${hostname} timed out: no answer from the DNS server in ${tries} ${tries === 1 ? 'try' : 'tries'} of ${timeoutMs} ms`,
    );
    this.name = 'DnsTimeoutError';
  }
}

type Family = 4 | 6;
type Answer = { readonly addresses: readonly string[] } | { readonly error: NodeJS.ErrnoException };

interface Entry {
  readonly answer: Answer;
  readonly expiresAt: number;
}

/** Answers that say the name has no address of a family: kept (briefly), unlike failures to get an answer. */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND', 'NOTFOUND', 'NODATA']);

/**
 * Resolves names for outgoing connections without the libuv thread pool: queries go
 * through c-ares (`dns.promises.Resolver`) on the event loop, A and AAAA side by side,
 * each of `tries` tries bounded by `timeoutMs`, so a name whose DNS never answers costs
 * an outstanding query for about `tries × timeoutMs`, and nothing else. `dns.lookup` (getaddrinfo) runs on the pool's four
 * threads without a timeout: four slow names stalled every lookup of the process, and
 * file-system work with them.
 *
 * Answers are cached within their TTL (at most `maxTtlSeconds`), "no address" answers for
 * `negativeTtlSeconds`, in an LRU of `cacheSize` entries; concurrent lookups of one name
 * share its queries. Timeouts and server failures are not cached.
 *
 * It reads neither `/etc/hosts` nor the resolver's search domains: names are looked up
 * as given. It answers addresses only; what may be reached is `egressLookup`'s to decide.
 */
export class DnsResolver {
  private readonly cares: CaresResolver;
  private readonly timeoutMs: number;
  private readonly tries: number;
  private readonly cacheSize: number;
  private readonly maxTtlMs: number;
  private readonly negativeTtlMs: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<Answer>>();

  constructor(options: DnsResolverOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DNS_DEFAULTS.timeoutMs;
    this.tries = options.tries ?? DNS_DEFAULTS.tries;
    this.cacheSize = options.cacheSize ?? DNS_DEFAULTS.cacheSize;
    this.maxTtlMs = (options.maxTtlSeconds ?? DNS_DEFAULTS.maxTtlSeconds) * 1000;
    this.negativeTtlMs = Math.min(
      (options.negativeTtlSeconds ?? DNS_DEFAULTS.negativeTtlSeconds) * 1000,
      this.maxTtlMs,
    );
    this.now = options.now ?? (() => performance.now());
    // maxTimeout: c-ares lengthens later tries (and has a floor of its own); here every try waits timeoutMs at most.
    this.cares = new CaresResolver({ timeout: this.timeoutMs, tries: this.tries, maxTimeout: this.timeoutMs });
    if (options.servers && options.servers.length > 0) this.cares.setServers([...options.servers]);
  }

  /** Ends every lookup still waiting for an answer (they fail with `ECANCELLED`): for shutting down. */
  cancel(): void {
    this.cares.cancel();
  }

  /** The servers asked, as c-ares holds them. */
  servers(): string[] {
    return this.cares.getServers();
  }

  /** Every address of the name (IPv4 first), or only one family's; rejects with the reason none came. */
  async resolve(hostname: string, family: 0 | 4 | 6 = 0): Promise<LookupAddress[]> {
    const literal = isIP(hostname);
    if (literal !== 0) {
      if (family !== 0 && family !== literal) throw noAddress(hostname);
      return [{ address: hostname, family: literal }];
    }
    const name = hostname.toLowerCase();
    const families: Family[] = family === 0 ? [4, 6] : [family];
    const answers = await Promise.all(families.map((f) => this.answer(name, f)));
    const addresses: LookupAddress[] = [];
    answers.forEach((answer, i) => {
      if ('addresses' in answer)
        for (const address of answer.addresses) addresses.push({ address, family: families[i]! });
    });
    if (addresses.length > 0) return addresses;
    // Nothing came: a timeout or a server failure says more than "no address" of the other family.
    const errors = answers.flatMap((a) => ('error' in a ? [a.error] : []));
    const failure = errors.find((e) => !NO_ADDRESS.has(e.code ?? ''));
    if (failure?.code === 'ETIMEOUT') throw new DnsTimeoutError(hostname, this.timeoutMs, this.tries);
    if (failure)
      throw Object.assign(new Error(`DNS lookup of ${hostname} failed: ${failure.message}`), { code: failure.code });
    throw noAddress(hostname);
  }

  /** `resolve` in the shape of `dns.lookup` with `all: true`, for `egressLookup({ resolve })`. */
  readonly lookup: Resolver = (hostname, options, callback) => {
    const family =
      options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    this.resolve(hostname, family).then(
      (addresses) => callback(null, addresses),
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };

  /** One family's answer: from the cache within its TTL, else from the servers (one query per name at a time). */
  private answer(name: string, family: Family): Promise<Answer> {
    const key = `${family}:${name}`;
    const kept = this.cache.get(key);
    if (kept && kept.expiresAt > this.now()) {
      // Most recently used last: the first entry is the one to drop.
      this.cache.delete(key);
      this.cache.set(key, kept);
      return Promise.resolve(kept.answer);
    }
    if (kept) this.cache.delete(key);
    const asked = this.inFlight.get(key);
    if (asked) return asked;
    const query = this.query(name, family).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, query);
    return query;
  }

  private async query(name: string, family: Family): Promise<Answer> {
    const key = `${family}:${name}`;
    try {
      const records =
        family === 4 ? await this.cares.resolve4(name, { ttl: true }) : await this.cares.resolve6(name, { ttl: true });
      const ttlMs = Math.min(this.maxTtlMs, ...records.map((r) => r.ttl * 1000));
      const answer: Answer = { addresses: records.map((r) => r.address) };
      if (ttlMs > 0) this.keep(key, answer, ttlMs);
      return answer;
    } catch (err) {
      const error = err as NodeJS.ErrnoException;
      const answer: Answer = { error };
      if (NO_ADDRESS.has(error.code ?? '') && this.negativeTtlMs > 0) this.keep(key, answer, this.negativeTtlMs);
      return answer;
    }
  }

  private keep(key: string, answer: Answer, ttlMs: number): void {
    if (this.cacheSize <= 0) return;
    this.cache.delete(key);
    while (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { answer, expiresAt: this.now() + ttlMs });
  }
}

function noAddress(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${hostname} has no address (ENOTFOUND)`), { code: 'ENOTFOUND', hostname });
}

/**
 * Why `spec` is not a list of DNS servers (comma-separated `ip`, `ip:port` or
 * `[ipv6]:port`), or undefined; an empty spec is the system's servers.
 */
export function dnsServersProblem(spec: string): string | undefined {
  for (const server of parseDnsServers(spec)) {
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server);
    const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(server);
    const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [server, undefined];
    const kind = isIP(address);
    if (kind === 0 || (bracketed && kind !== 6))
      return `${JSON.stringify(server)} is not an IP address (with an optional port)`;
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535))
      return `${JSON.stringify(server)} has no valid port`;
  }
  return undefined;
}

/** The servers of a comma-separated list (none: the system's). */
export function parseDnsServers(spec: string): string[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
