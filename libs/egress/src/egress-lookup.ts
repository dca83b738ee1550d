import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress, describeVerdict, type AddressVerdict } from './address-verdict.js';
import { checkHost, type EgressOptions, type EgressRefusal } from './destination.js';

/** Name resolution answering every address (dns.lookup with `all: true` has this shape). */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface EgressLookupOptions extends EgressOptions {
  /** Name resolution; dns.lookup unless given. */
  readonly resolve?: Resolver;
}

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
 */
export function egressLookup(options: EgressLookupOptions = {}): LookupFunction {
  const resolve: Resolver = options.resolve ?? dnsLookup;
  if (options.allowPrivate)
    return (hostname, opts, callback) => resolve(hostname, { ...opts, all: true }, pick(hostname, opts, callback));
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
