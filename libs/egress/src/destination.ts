import { isIP } from 'node:net';
import { classifyAddress, describeVerdict, type AddressVerdict } from './address-verdict.js';

/** A host as a connection would reach it: an IP address, or a name still to be resolved. */
export type Host =
  | { readonly kind: 'address'; readonly address: string; readonly family: 4 | 6 }
  | { readonly kind: 'name'; readonly name: string };

/** Policy of a check. */
export interface EgressOptions {
  /**
   * Allow every destination (loopback, private, link-local...): the operator's
   * setting for local development and tests. The scheme is still checked.
   */
  readonly allowPrivate?: boolean;
}

/** Why a destination is refused. */
export interface EgressRefusal {
  /**
   * `invalid`: not an http(s) URL or not a host, refused whatever the policy;
   * `non-public`: a destination that only `allowPrivate` lets through.
   */
  readonly kind: 'invalid' | 'non-public';
  /** A phrase that completes "The URL ...": `points to a non-public address: ...`. */
  readonly reason: string;
  /** The verdict on the address, when an address was refused. */
  readonly verdict?: AddressVerdict;
}

const SCHEMES = new Set(['http:', 'https:']);
/** Characters that cannot be in a host given alone (they would end it, or start userinfo, port or path). */
const NOT_IN_HOST = /[\s/\\?#@:[\]%]/u;

/**
 * Parses a host the way a connection would see it. The WHATWG URL host parser
 * does the work, so IPv4 in any notation it accepts (`0x7f.1`, `2130706433`,
 * `0177.0.0.1`, `127.1`, a trailing dot) becomes the dotted quad it means, and
 * names are lowercased and IDNA-mapped (`ＬＯＣＡＬＨＯＳＴ` is `localhost`).
 * IPv6 may be bracketed and may carry a zone id (`fe80::1%eth0`, or `%25eth0`
 * as in a URL), which is dropped. Undefined when it is not a host.
 */
export function parseHost(host: string): Host | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.includes(':')) {
    const address = bare.replace(/%(25)?[^%]*$/u, '');
    return isIP(address) === 6 ? { kind: 'address', address: classifyAddress(address).address, family: 6 } : undefined;
  }
  if (bare !== host || bare === '' || NOT_IN_HOST.test(bare)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${bare}/`).hostname;
  } catch {
    return undefined;
  }
  if (isIP(hostname) === 4) return { kind: 'address', address: hostname, family: 4 };
  return { kind: 'name', name: hostname };
}

/** Whether a name is `localhost` or under it (RFC 6761 reserves both for loopback), trailing dots or not. */
export function isLocalhostName(name: string): boolean {
  const bare = name.toLowerCase().replace(/\.+$/u, '');
  return bare === 'localhost' || bare.endsWith('.localhost');
}

/**
 * Why a connection to this host must not be made, or undefined: an IP literal
 * that is not global unicast, or `localhost` (and `*.localhost`). Other names
 * pass: they are judged on the addresses they resolve to (`egressLookup`).
 */
export function checkHost(host: string, options: EgressOptions = {}): EgressRefusal | undefined {
  const parsed = parseHost(host);
  if (!parsed) return { kind: 'invalid', reason: `has an invalid host ${JSON.stringify(host)}` };
  if (options.allowPrivate) return undefined;
  if (parsed.kind === 'name')
    return isLocalhostName(parsed.name)
      ? { kind: 'non-public', reason: `names ${parsed.name}, a loopback name (RFC 6761), not a public address` }
      : undefined;
  const verdict = classifyAddress(parsed.address);
  if (verdict.global) return undefined;
  return { kind: 'non-public', reason: `points to a non-public address: ${describeVerdict(verdict)}`, verdict };
}

/**
 * The check of a URL before anything is sent: an absolute http or https URL
 * (parsed as the HTTP client will parse it, by WHATWG URL rules) whose host
 * passes `checkHost`. Undefined when it may be fetched; names still need
 * `egressLookup` on the connection, which judges what they resolve to.
 */
export function checkUrl(url: string | URL, options: EgressOptions = {}): EgressRefusal | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return { kind: 'invalid', reason: 'is not an absolute URL' };
  }
  if (!SCHEMES.has(parsed.protocol)) return { kind: 'invalid', reason: 'must be an http or https URL' };
  return checkHost(parsed.hostname, options);
}
