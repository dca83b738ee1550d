import { BlockList, isIP } from 'node:net';

/**
 * Addresses a receiver may not have unless the operator allows private
 * receivers: loopback, private, link-local, carrier-grade NAT, unspecified,
 * multicast and reserved ranges, in IPv4 and IPv6 (IPv4-mapped IPv6 included).
 * Node's BlockList does the matching.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is loopback, private, link-local or otherwise not a public receiver. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return BLOCKED.check(ip, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped) return BLOCKED.check(mapped, 'ipv4');
  return BLOCKED.check(ip, 'ipv6');
}

/**
 * Why a receiver URL is refused before any lookup (its host is `localhost` or a
 * literal private address), or undefined. Names are checked again after DNS
 * resolution at delivery time, since a name can point anywhere.
 */
export function refusedReceiver(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return 'must be an http(s) URL';
  }
  if (host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host))
    return 'points to a private, loopback or link-local address (the operator may allow these with WEBHOOKS_ALLOW_PRIVATE_RECEIVERS=true)';
  return undefined;
}
