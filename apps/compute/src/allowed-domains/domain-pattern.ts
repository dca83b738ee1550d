import { isIP } from 'node:net';

/** One label of a host name (after IDNA mapping): LDH, 1 to 63 characters, no hyphen at either end. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/u;

/** Most domains one workspace may allow. */
export const MAX_ALLOWED_DOMAINS = 100;

/**
 * A domain as stored: lowercased and IDNA-mapped by the WHATWG URL parser (so
 * `Bücher.example` is `xn--bcher-kva.example`), no trailing dot, optionally
 * `*.` for every name under it. IP addresses, ports, paths and other wildcards
 * are refused with the reason. Pure.
 */
export function normaliseDomain(input: string): { domain: string } | { error: string } {
  const text = input.trim();
  const wildcard = text.startsWith('*.');
  const name = wildcard ? text.slice(2) : text;
  if (name === '' || /[\s/\\?#@:[\]%*]/u.test(name)) {
    return {
      error: 'must be a host name such as api.example.com or *.example.com (no scheme, port, path or other wildcard)',
    };
  }
  let host: string;
  try {
    host = new URL(`http://${name}/`).hostname.replace(/\.$/u, '');
  } catch {
    return { error: 'is not a valid host name' };
  }
  if (isIP(host)) return { error: 'must be a domain name, not an IP address' };
  if (!host.split('.').every((label) => LABEL.test(label))) {
    return {
      error:
        'is not a valid host name: each dot-separated label is 1 to 63 letters, digits or hyphens, with no hyphen at either end',
    };
  }
  if (/^[\d.]+$/u.test(host)) return { error: 'must be a domain name, not an IP address' };
  if (!host.includes('.') && host !== 'localhost') return { error: 'must be a fully qualified domain name' };
  if (host.length > 253) return { error: 'is longer than 253 characters' };
  return { domain: wildcard ? `*.${host}` : host };
}

/** Whether `hostname` (as a URL gives it) is allowed by one of `domains`. Pure. */
export function isAllowedHost(hostname: string, domains: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/u, '');
  return domains.some((d) => (d.startsWith('*.') ? host.endsWith(d.slice(1)) : host === d));
}
