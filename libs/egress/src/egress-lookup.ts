import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress, describeVerdict, type AddressVerdict } from './address-verdict.js';
import { checkHost, isLocalhostName, type EgressOptions, type EgressRefusal } from './destination.js';
import { DnsResolver, type Resolver } from './dns-resolver.js';

export interface EgressLookupOptions extends EgressOptions {
  /**
   * Name resolution; a process-wide `DnsResolver` with the system's servers and the
   * defaults unless given (never `dns.lookup`, whose getaddrinfo calls occupy the libuv
   * thread pool with no timeout).
   */
  readonly resolve?: Resolver;
}

let shared: DnsResolver | undefined;

/** The resolver of lookups made without one of their own (created on first use). */
function sharedResolver(): Resolver {
  shared ??= new DnsResolver();
  return shared.lookup;
}

/** What `localhost` names resolve to where they are allowed (RFC 6761: loopback, never asked of DNS). */
const LOOPBACK: readonly LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** A connection refused by an egress check; `code` is `EEGRESSREFUSED`. */
export class EgressRefusedError extends Error {
  readonly code = 'EEGRESSREFUSED';

  constructor(
    readonly host: string,
    readonly refusal: EgressRefusal,
  ) {
    super(`${host} ${refusal.reason}`);
    this.name = 'EgressRefusedError';
  }
}

/** Whether an error (from a request, a socket or a lookup) is an egress refusal. */
export function isEgressRefusal(err: unknown): err is EgressRefusedError {
  return err instanceof EgressRefusedError;
}

type AllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

/**
 * A `lookup` for node:net, node:http and node:https (and undici's `connect`
 * options, which hand it to node:net): it resolves the name and refuses the
 * connection, before it is made, unless every address of the answer is global
 * unicast. The check is on the addresses the socket will connect to, so a name
 * that resolves (or is rebound) to a private address cannot slip through.
 *
 * Node never calls a lookup for an IP literal: check the URL or host first
 * (`checkUrl`, `checkHost`), and again on every redirect.
 *
 * Names are resolved by `options.resolve`, by default a shared `DnsResolver` (c-ares on
 * the event loop, with a timeout and a TTL cache), so a tenant's slow DNS cannot hold
 * the thread pool every lookup and file access of the process needs.
 */
export function egressLookup(options: EgressLookupOptions = {}): LookupFunction {
  const resolve: Resolver = options.resolve ?? sharedResolver();
  if (options.allowPrivate)
    return (hostname, opts, callback) => {
      // Where private destinations are allowed (development), `localhost` is the machine, as /etc/hosts says.
      if (isLocalhostName(hostname)) {
        const wanted =
          opts.family === 4 || opts.family === 6 ? LOOPBACK.filter((a) => a.family === opts.family) : LOOPBACK;
        return pick(hostname, opts, callback)(null, [...wanted]);
      }
      resolve(hostname, { ...opts, all: true }, pick(hostname, opts, callback));
    };
  return (hostname, opts, callback) => {
    const named = checkHost(hostname);
    if (named) return callback(new EgressRefusedError(hostname, named), '', 0);
    resolve(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      for (const { address } of addresses) {
        const verdict = verdictOf(address);
        if (!verdict) {
          const reason = `resolves to ${JSON.stringify(address)}, not an IP address`;
          return callback(new EgressRefusedError(hostname, { kind: 'invalid', reason }), '', 0);
        }
        if (!verdict.global) {
          const reason = `resolves to a non-public address: ${describeVerdict(verdict)}`;
          return callback(new EgressRefusedError(hostname, { kind: 'non-public', reason, verdict }), '', 0);
        }
      }
      pick(hostname, opts, callback)(null, addresses);
    });
  };
}

/** The verdict on a resolver's answer, or undefined when it is not an IP address (never a throw in a callback). */
function verdictOf(address: string): AddressVerdict | undefined {
  if (isIP(address) === 0) return undefined;
  try {
    return classifyAddress(address);
  } catch {
    return undefined;
  }
}

/** Answers all addresses or the first, as the caller asked. */
function pick(hostname: string, opts: { all?: boolean }, callback: Parameters<LookupFunction>[2]): AllCallback {
  return (err, addresses) => {
    if (err) return callback(err, '', 0);
    if (opts.all) return (callback as unknown as AllCallback)(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
    return callback(null, first.address, first.family);
  };
}
