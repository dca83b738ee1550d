import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { IPV4_BLOCKS, IPV6_BLOCKS, IPV6_GLOBAL_UNICAST, type AddressBlock } from './special-purpose-blocks.js';

/** How an IPv6 address carries an IPv4 address. */
export type EmbeddingForm = 'IPv4-mapped' | 'IPv4-compatible' | 'NAT64' | 'local-use NAT64' | '6to4' | 'Teredo';

/** The IPv4 address an IPv6 address carries, and the verdict on that IPv4 address. */
export interface EmbeddedIPv4 {
  readonly form: EmbeddingForm;
  readonly ipv4: string;
  readonly verdict: AddressVerdict;
}

interface VerdictBase {
  /** The address in its canonical form (dotted quad, or RFC 5952 IPv6 without a zone id). */
  readonly address: string;
  readonly family: 4 | 6;
  readonly embedded?: EmbeddedIPv4;
}

/** Whether an address is a global unicast destination, and if not, the block that makes it not one. */
export type AddressVerdict =
  (VerdictBase & { readonly global: true }) | (VerdictBase & { readonly global: false; readonly block: AddressBlock });

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Parsed, number];

const cidr = (prefix: string): Cidr => ipaddr.parseCIDR(prefix);
const compile = (blocks: readonly AddressBlock[]) => blocks.map((block) => ({ block, cidr: cidr(block.prefix) }));
const V4 = compile(IPV4_BLOCKS);
const V6 = compile(IPV6_BLOCKS);
const GLOBAL_UNICAST_V6 = cidr(IPV6_GLOBAL_UNICAST);
const MAPPED = cidr('::ffff:0:0/96');
const COMPATIBLE = cidr('::/96');
const NAT64 = cidr('64:ff9b::/96');
const NAT64_LOCAL = cidr('64:ff9b:1::/48');
const SIX_TO_FOUR = cidr('2002::/16');
const TEREDO = cidr('2001::/32');

/** The most specific block of the table containing the address, if any. */
function mostSpecific(address: Parsed, table: typeof V4): AddressBlock | undefined {
  let found: { block: AddressBlock; bits: number } | undefined;
  for (const {
    block,
    cidr: [net, bits],
  } of table)
    if (address.kind() === net.kind() && address.match(net, bits) && (!found || bits > found.bits))
      found = { block, bits };
  return found?.block;
}

/**
 * Classifies an IP address (a dotted quad, or IPv6 with an optional zone id):
 * global unicast or not, following the IANA special-purpose registries.
 *
 * - IPv4: global unless inside a block of IPV4_BLOCKS.
 * - IPv6: global only inside 2000::/3 and outside every special-purpose block.
 * - The IPv4 inside an IPv6 address is decoded and judged too. IPv4-mapped
 *   (::ffff:0:0/96) and NAT64 well-known-prefix (64:ff9b::/96) addresses are
 *   exactly as global as their IPv4 (a dual-stack socket or a NAT64 gateway
 *   takes them there). IPv4-compatible (::/96), local-use NAT64, 6to4 and
 *   Teredo addresses are refused as their block whatever they carry, with the
 *   carried IPv4 named (Teredo's client address is the last 32 bits inverted).
 *
 * Throws a TypeError for anything that is not an IP address in standard
 * notation (no hex, octal or shortened IPv4: parse hosts with `parseHost`).
 */
export function classifyAddress(ip: string): AddressVerdict {
  const family = isIP(ip);
  if (family === 4) return classifyIPv4(ipaddr.IPv4.parse(ip));
  if (family === 6) return classifyIPv6(ipaddr.IPv6.parse(canonicalIPv6(ip)));
  throw new TypeError(`Not an IP address: ${JSON.stringify(ip)}`);
}

/**
 * The WHATWG URL serialisation of an IPv6 address (hex groups only, zone id
 * dropped). ipaddr.js must only see this form: it reads the deprecated
 * IPv4-compatible notation `::8.8.8.8` as the IPv4-mapped `::ffff:8.8.8.8`,
 * whereas the socket connects to `::808:808`.
 */
function canonicalIPv6(ip: string): string {
  try {
    return new URL(`http://[${ip.replace(/%.*$/u, '')}]/`).hostname.slice(1, -1);
  } catch {
    throw new TypeError(`Not an IP address: ${JSON.stringify(ip)}`);
  }
}

/** Whether a string is an IP address that is a global unicast destination (false for anything else). */
export function isGlobalUnicast(ip: string): boolean {
  return isIP(ip) !== 0 && classifyAddress(ip).global;
}

function classifyIPv4(address: ipaddr.IPv4): AddressVerdict {
  const block = mostSpecific(address, V4);
  const text = address.toString();
  return block ? { address: text, family: 4, global: false, block } : { address: text, family: 4, global: true };
}

function classifyIPv6(address: ipaddr.IPv6): AddressVerdict {
  const text = address.toRFC5952String();
  const embedded = embeddedIPv4(address);
  if (embedded && (embedded.form === 'IPv4-mapped' || embedded.form === 'NAT64')) {
    // Judged as the IPv4 address it reaches.
    const inner = embedded.verdict;
    return inner.global
      ? { address: text, family: 6, global: true, embedded }
      : { address: text, family: 6, global: false, block: inner.block, embedded };
  }
  const block = mostSpecific(address, V6);
  const inGlobalUnicast = address.match(...GLOBAL_UNICAST_V6);
  if (inGlobalUnicast && !block) return { address: text, family: 6, global: true };
  // Every address outside 2000::/3 is in some block of the table (its address-space entries cover it).
  return {
    address: text,
    family: 6,
    global: false,
    block: block ?? { prefix: IPV6_GLOBAL_UNICAST, name: 'outside Global Unicast', reference: 'RFC 4291' },
    ...(embedded ? { embedded } : {}),
  };
}

/** The IPv4 address an IPv6 address embeds in one of the standard forms, if any. */
function embeddedIPv4(address: ipaddr.IPv6): EmbeddedIPv4 | undefined {
  const p = address.parts;
  const word = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const form = (name: EmbeddingForm, ipv4: ipaddr.IPv4): EmbeddedIPv4 => ({
    form: name,
    ipv4: ipv4.toString(),
    verdict: classifyIPv4(ipv4),
  });
  const [p1 = 0, p2 = 0, p6 = 0, p7 = 0] = [p[1], p[2], p[6], p[7]];
  if (address.match(...MAPPED)) return form('IPv4-mapped', word(p6, p7));
  if (address.match(...NAT64)) return form('NAT64', word(p6, p7));
  if (address.match(...NAT64_LOCAL)) return form('local-use NAT64', word(p6, p7));
  if (address.match(...SIX_TO_FOUR)) return form('6to4', word(p1, p2));
  if (address.match(...TEREDO)) return form('Teredo', word(~p6 & 0xffff, ~p7 & 0xffff));
  // ::/96 minus the unspecified and loopback addresses, which carry nothing.
  if (address.match(...COMPATIBLE) && (p6 !== 0 || p7 > 1)) return form('IPv4-compatible', word(p6, p7));
  return undefined;
}

/** One sentence on a verdict: `127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)`. */
export function describeVerdict(verdict: AddressVerdict): string {
  const { address, embedded } = verdict;
  if (verdict.global)
    return embedded
      ? `${address} (${embedded.form} ${embedded.ipv4}) is a global unicast address`
      : `${address} is a global unicast address`;
  const where = `${verdict.block.prefix}, ${verdict.block.name} (${verdict.block.reference})`;
  if (!embedded) return `${address} is in ${where}`;
  if (embedded.form === 'IPv4-mapped' || embedded.form === 'NAT64')
    return `${address} (${embedded.form} ${embedded.ipv4}) is in ${where}`;
  const inner = embedded.verdict.global ? '' : ` (${embedded.verdict.block.name})`;
  return `${address} is in ${where}, carrying ${embedded.ipv4}${inner}`;
}
