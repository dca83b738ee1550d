import { isIPv4, isIPv6 } from 'node:net';

/**
 * The part of a client's address that sign-in limits count by: an IPv4 address
 * whole (an IPv4-mapped IPv6 address as its IPv4), an IPv6 address by its /64,
 * the block one subscriber is usually given (counting single IPv6 addresses
 * would hand an attacker 2^64 fresh counters). Pure; undefined for anything
 * that is not an address.
 */
export function addressKey(ip: string | undefined): string | undefined {
  if (!ip) return undefined;
  const bare = ip.replace(/%.*$/, '');
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return undefined;
  const groups = expandIPv6(bare);
  const mapped = /^0{1,4}:0{1,4}:0{1,4}:0{1,4}:0{1,4}:ffff$/i.test(groups.slice(0, 6).join(':'));
  if (mapped) {
    const [hi, lo] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail turned into two). */
function expandIPv6(ip: string): string[] {
  let text = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  if (tail === undefined) return left;
  const right = tail ? tail.split(':') : [];
  return [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `AUTH_TRUSTED_PROXIES` as Express's `trust proxy` takes it: a number of
 * proxy hops, or a list of addresses, subnets (`10.0.0.0/8`) and the names
 * `loopback`, `linklocal`, `uniquelocal`. Undefined when the text is neither.
 */
export function parseTrustedProxies(value: string): number | string[] | undefined {
  const text = value.trim();
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) return undefined;
  return items.every(isProxyItem) ? items : undefined;
}

function isProxyItem(item: string): boolean {
  if (PROXY_NAMES.has(item)) return true;
  const [address, bits, ...rest] = item.split('/');
  if (rest.length > 0 || !address) return false;
  const family = isIPv4(address) ? 4 : isIPv6(address) ? 6 : 0;
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return family === 4 && isIPv4(bits);
  return Number(bits) <= (family === 4 ? 32 : 128);
}
