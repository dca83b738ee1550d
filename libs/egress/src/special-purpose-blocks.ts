/** A block of addresses that is not a global unicast destination, named as its registry names it. */
export interface AddressBlock {
  /** CIDR notation, e.g. `127.0.0.0/8`. */
  readonly prefix: string;
  readonly name: string;
  /** The RFC that defines the block. */
  readonly reference: string;
}

/**
 * Every IPv4 block of the IANA IPv4 Special-Purpose Address Registry, plus
 * multicast (224.0.0.0/4, from the IPv4 Address Space registry): nothing here
 * is a global unicast destination. The few entries the registry marks globally
 * reachable (anycast service addresses such as AS112 and AMT) are refused too:
 * no receiver or API lives there.
 */
export const IPV4_BLOCKS: readonly AddressBlock[] = [
  { prefix: '0.0.0.0/8', name: '"This network"', reference: 'RFC 791' },
  { prefix: '0.0.0.0/32', name: '"This host on this network"', reference: 'RFC 1122' },
  { prefix: '10.0.0.0/8', name: 'Private-Use', reference: 'RFC 1918' },
  { prefix: '100.64.0.0/10', name: 'Shared Address Space', reference: 'RFC 6598' },
  { prefix: '127.0.0.0/8', name: 'Loopback', reference: 'RFC 1122' },
  { prefix: '169.254.0.0/16', name: 'Link Local', reference: 'RFC 3927' },
  { prefix: '172.16.0.0/12', name: 'Private-Use', reference: 'RFC 1918' },
  { prefix: '192.0.0.0/24', name: 'IETF Protocol Assignments', reference: 'RFC 6890' },
  { prefix: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', reference: 'RFC 7335' },
  { prefix: '192.0.0.8/32', name: 'IPv4 dummy address', reference: 'RFC 7600' },
  { prefix: '192.0.0.9/32', name: 'Port Control Protocol Anycast', reference: 'RFC 7723' },
  { prefix: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', reference: 'RFC 8155' },
  { prefix: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', reference: 'RFC 8880' },
  { prefix: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', reference: 'RFC 8880' },
  { prefix: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', reference: 'RFC 5737' },
  { prefix: '192.31.196.0/24', name: 'AS112-v4', reference: 'RFC 7535' },
  { prefix: '192.52.193.0/24', name: 'AMT', reference: 'RFC 7450' },
  { prefix: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', reference: 'RFC 7526' },
  { prefix: '192.88.99.2/32', name: '6a44-relay anycast address', reference: 'RFC 6751' },
  { prefix: '192.168.0.0/16', name: 'Private-Use', reference: 'RFC 1918' },
  { prefix: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', reference: 'RFC 7534' },
  { prefix: '198.18.0.0/15', name: 'Benchmarking', reference: 'RFC 2544' },
  { prefix: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', reference: 'RFC 5737' },
  { prefix: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', reference: 'RFC 5737' },
  { prefix: '224.0.0.0/4', name: 'Multicast', reference: 'RFC 5771' },
  { prefix: '240.0.0.0/4', name: 'Reserved', reference: 'RFC 1112' },
  { prefix: '255.255.255.255/32', name: 'Limited Broadcast', reference: 'RFC 919' },
];

/** The only IPv6 space a destination may be in (IANA IPv6 Address Space registry). */
export const IPV6_GLOBAL_UNICAST = '2000::/3';

/**
 * IPv6 blocks that are not global unicast destinations: every block of the IANA
 * IPv6 Special-Purpose Address Registry (inside 2000::/3 and outside it), the
 * IPv4-compatible form that RFC 4291 deprecated, and the IANA IPv6 Address
 * Space registry's blocks outside 2000::/3, so that every address outside
 * 2000::/3 has a name. The most specific block containing an address names it.
 */
export const IPV6_BLOCKS: readonly AddressBlock[] = [
  // IPv6 Address Space registry: everything outside 2000::/3.
  { prefix: '::/8', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: '100::/8', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: '200::/7', name: 'Reserved by IETF', reference: 'RFC 4048' },
  { prefix: '400::/6', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: '800::/5', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: '1000::/4', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: '4000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: '6000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: '8000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: 'a000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: 'c000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: 'e000::/4', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: 'f000::/5', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: 'f800::/6', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: 'fc00::/7', name: 'Unique-Local', reference: 'RFC 4193' },
  { prefix: 'fe00::/9', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { prefix: 'fe80::/10', name: 'Link-Local Unicast', reference: 'RFC 4291' },
  { prefix: 'fec0::/10', name: 'Deprecated Site-Local', reference: 'RFC 3879' },
  { prefix: 'ff00::/8', name: 'Multicast', reference: 'RFC 4291' },
  // Special-Purpose Address Registry, and the deprecated IPv4-compatible form.
  { prefix: '::/128', name: 'Unspecified Address', reference: 'RFC 4291' },
  { prefix: '::1/128', name: 'Loopback Address', reference: 'RFC 4291' },
  { prefix: '::/96', name: 'Deprecated IPv4-compatible Address', reference: 'RFC 4291' },
  { prefix: '::ffff:0:0/96', name: 'IPv4-mapped Address', reference: 'RFC 4291' },
  { prefix: '64:ff9b::/96', name: 'NAT64 Well-Known Prefix', reference: 'RFC 6052' },
  { prefix: '64:ff9b:1::/48', name: 'NAT64 Local-Use Prefix', reference: 'RFC 8215' },
  { prefix: '100::/64', name: 'Discard-Only Address Block', reference: 'RFC 6666' },
  { prefix: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', reference: 'RFC 9780' },
  { prefix: '2001::/23', name: 'IETF Protocol Assignments', reference: 'RFC 2928' },
  { prefix: '2001::/32', name: 'Teredo', reference: 'RFC 4380' },
  { prefix: '2001:1::1/128', name: 'Port Control Protocol Anycast', reference: 'RFC 7723' },
  { prefix: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', reference: 'RFC 8155' },
  { prefix: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast', reference: 'RFC 9665' },
  { prefix: '2001:2::/48', name: 'Benchmarking', reference: 'RFC 5180' },
  { prefix: '2001:3::/32', name: 'AMT', reference: 'RFC 7450' },
  { prefix: '2001:4:112::/48', name: 'AS112-v6', reference: 'RFC 7535' },
  { prefix: '2001:10::/28', name: 'Deprecated (previously ORCHID)', reference: 'RFC 4843' },
  { prefix: '2001:20::/28', name: 'ORCHIDv2', reference: 'RFC 7343' },
  { prefix: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs)', reference: 'RFC 9374' },
  { prefix: '2001:db8::/32', name: 'Documentation', reference: 'RFC 3849' },
  { prefix: '2002::/16', name: '6to4', reference: 'RFC 3056' },
  { prefix: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', reference: 'RFC 7534' },
  { prefix: '3fff::/20', name: 'Documentation', reference: 'RFC 9637' },
  { prefix: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', reference: 'RFC 9602' },
];
