import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { classifyAddress } from './address-verdict.js';
import { REFUSED_V4, REFUSED_V6, REFUSED_V6_IN_GLOBAL_UNICAST } from '../test/expected-registry.js';

// Addresses as integers: 32 bits for IPv4, 128 bits (bigint) for IPv6.
const V4_MAX = 0xffff_ffff;
const V6_MAX = (1n << 128n) - 1n;

const v4Text = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 0xff).join('.');
const v6Groups = (n: bigint) => Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
/** Every group written out: `0:0:0:0:0:ffff:7f00:1`. */
const v6Full = (n: bigint) =>
  v6Groups(n)
    .map((g) => g.toString(16))
    .join(':');
/** The first six groups, then the last 32 bits as a dotted quad: `0:0:0:0:0:ffff:127.0.0.1`. */
const v6DottedTail = (n: bigint) =>
  `${v6Groups(n)
    .slice(0, 6)
    .map((g) => g.toString(16))
    .join(':')}:${v4Text(Number(n & 0xffff_ffffn))}`;
/** The shortest form, with `::` (from ipaddr.js, given only hex groups). */
const v6Short = (n: bigint) => new ipaddr.IPv6(v6Groups(n)).toRFC5952String();

const v4Range = (prefix: string) => {
  const [net, bits] = prefix.split('/') as [string, string];
  const base = net.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(bits));
  return { base, size };
};
const v6Range = (prefix: string) => {
  const [net, bits] = ipaddr.IPv6.parseCIDR(prefix);
  const base = net.parts.reduce((acc, part) => (acc << 16n) | BigInt(part), 0n);
  return { base, hostMask: (1n << BigInt(128 - bits)) - 1n };
};

const inV4 = (prefix: string, n: number) => {
  const { base, size } = v4Range(prefix);
  return n >= base && n < base + size;
};
const inV6 = (prefix: string, n: bigint) => {
  const { base, hostMask } = v6Range(prefix);
  return (n & ~hostMask) === base;
};

/** The test's own oracle, from its own list of blocks: is an IPv4 address (as a number) global unicast? */
const v4Global = (n: number) => !REFUSED_V4.some((prefix) => inV4(prefix, n));
/** The oracle for IPv6: inside 2000::/3 and no special block, or IPv4-mapped / NAT64 of a global IPv4. */
const v6Global = (n: bigint) => {
  if (inV6('::ffff:0:0/96', n) || inV6('64:ff9b::/96', n)) return v4Global(Number(n & 0xffff_ffffn));
  return inV6('2000::/3', n) && !REFUSED_V6_IN_GLOBAL_UNICAST.some((prefix) => inV6(prefix, n));
};

const anyV4 = fc.integer({ min: 0, max: V4_MAX });
const v4InBlock = (prefixes: readonly string[]) =>
  fc.tuple(fc.constantFrom(...prefixes), fc.integer({ min: 0, max: V4_MAX })).map(([prefix, r]) => {
    const { base, size } = v4Range(prefix);
    return base + (r % size);
  });
const v6InBlock = (prefixes: readonly string[]) =>
  fc.tuple(fc.constantFrom(...prefixes), fc.bigInt({ min: 0n, max: V6_MAX })).map(([prefix, r]) => {
    const { base, hostMask } = v6Range(prefix);
    return base | (r & hostMask);
  });
/** IPv6 addresses that exercise every rule: uniform, inside each block, and in 2000::/3. */
const anyV6 = fc.oneof(
  fc.bigInt({ min: 0n, max: V6_MAX }),
  v6InBlock(REFUSED_V6),
  v6InBlock(['2000::/3']),
  v4InBlock(REFUSED_V4).map((v4) => (0xffffn << 32n) | BigInt(v4)),
  anyV4.map((v4) => (0x64ff9bn << 96n) | BigInt(v4)),
);

// The embedding forms, built from an IPv4 address as a number.
const mapped = (v4: number) => (0xffffn << 32n) | BigInt(v4);
const compatible = (v4: number) => BigInt(v4);
const nat64 = (v4: number) => (0x64ff9bn << 96n) | BigInt(v4);
const nat64Local = (v4: number, subnet: bigint) =>
  (0x0064_ff9b_0001n << 80n) | ((subnet & 0xffff_ffff_ffffn) << 32n) | BigInt(v4);
const sixToFour = (v4: number, rest: bigint) => (0x2002n << 112n) | (BigInt(v4) << 80n) | (rest & ((1n << 80n) - 1n));
/** Teredo: 2001:0::/32, server IPv4, flags, inverted port, inverted client IPv4 (RFC 4380 §4). */
const teredo = (v4: number, middle: bigint) =>
  (0x2001_0000n << 96n) | ((middle & ((1n << 64n) - 1n)) << 32n) | BigInt(~v4 >>> 0);

const RUNS = { numRuns: 2000 };

describe('classifyAddress (properties)', () => {
  it('judges every IPv4 address as the registry does', () => {
    fc.assert(
      fc.property(fc.oneof(anyV4, v4InBlock(REFUSED_V4)), (n) => {
        expect({ address: v4Text(n), global: classifyAddress(v4Text(n)).global }).toEqual({
          address: v4Text(n),
          global: v4Global(n),
        });
      }),
      RUNS,
    );
  });

  it('refuses every IPv4 address inside a refused block', () => {
    fc.assert(
      fc.property(v4InBlock(REFUSED_V4), (n) => {
        expect(classifyAddress(v4Text(n)).global).toBe(false);
      }),
      RUNS,
    );
  });

  it('refuses every IPv6 address inside a refused block (the IPv4-carrying ones as their IPv4)', () => {
    const judgedAsBlocks = REFUSED_V6.filter((p) => p !== '::ffff:0:0/96' && p !== '64:ff9b::/96');
    fc.assert(
      fc.property(v6InBlock(judgedAsBlocks), (n) => {
        expect({ address: v6Full(n), global: classifyAddress(v6Full(n)).global }).toEqual({
          address: v6Full(n),
          global: false,
        });
      }),
      RUNS,
    );
  });

  it('judges every IPv6 address as the registry does, whichever way it is written', () => {
    fc.assert(
      fc.property(anyV6, (n) => {
        const expected = v6Global(n);
        for (const text of [v6Full(n), v6DottedTail(n), v6Short(n)])
          expect({ text, global: classifyAddress(text).global }).toEqual({ text, global: expected });
        expect(classifyAddress(v6DottedTail(n)).address).toBe(classifyAddress(v6Full(n)).address);
      }),
      RUNS,
    );
  });

  it('judges IPv4-mapped and NAT64 addresses exactly like the IPv4 address they carry', () => {
    fc.assert(
      fc.property(fc.oneof(anyV4, v4InBlock(REFUSED_V4)), fc.constantFrom(mapped, nat64), (v4, form) => {
        const inner = classifyAddress(v4Text(v4));
        const outer = classifyAddress(v6Full(form(v4)));
        expect(outer.global).toBe(inner.global);
        expect(outer.embedded?.ipv4).toBe(v4Text(v4));
        if (!outer.global && !inner.global) expect(outer.block).toEqual(inner.block);
      }),
      RUNS,
    );
  });

  it('refuses IPv4-compatible, local-use NAT64, 6to4 and Teredo addresses, naming the IPv4 they carry', () => {
    fc.assert(
      fc.property(
        fc.oneof(anyV4, v4InBlock(REFUSED_V4)),
        fc.bigInt({ min: 0n, max: V6_MAX }),
        fc.constantFrom('IPv4-compatible', 'local-use NAT64', '6to4', 'Teredo'),
        (v4, bits, form) => {
          const n =
            form === 'IPv4-compatible'
              ? compatible(v4)
              : form === 'local-use NAT64'
                ? nat64Local(v4, bits)
                : form === '6to4'
                  ? sixToFour(v4, bits)
                  : teredo(v4, bits);
          const verdict = classifyAddress(v6Full(n));
          expect(verdict.global).toBe(false);
          // :: and ::1 are the unspecified and loopback addresses, not IPv4-compatible ones.
          if (n > 1n)
            expect(verdict.embedded).toEqual({
              form,
              ipv4: v4Text(v4),
              verdict: classifyAddress(v4Text(v4)),
            });
        },
      ),
      RUNS,
    );
  });
});
