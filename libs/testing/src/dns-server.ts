import { createSocket, type RemoteInfo } from 'node:dgram';
import dnsPacket from 'dns-packet';

/** How the test server answers a name. */
export type DnsZoneEntry =
  /** Addresses (A for IPv4, AAAA for IPv6) with their TTL in seconds; a family without one answers no data. */
  | { readonly addresses: readonly string[]; readonly ttl?: number }
  /** Never answers: the query is read and dropped, as by a server or a network that lost it. */
  | { readonly silent: true };

/** A query the server received. */
export interface DnsQuerySeen {
  readonly name: string;
  readonly type: string;
}

/** A DNS server on loopback (UDP) for tests: answers from `zone`, NXDOMAIN for names it does not know. */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as a resolver's server list takes it. */
  readonly address: string;
  /** Every query received, in order. */
  readonly queries: readonly DnsQuerySeen[];
  /** Queries received for a name (any type). */
  queriesFor(name: string): DnsQuerySeen[];
  /** Adds or changes a name's entry. */
  set(name: string, entry: DnsZoneEntry): void;
  close(): Promise<void>;
}

const NXDOMAIN = 3;

/**
 * Starts a real DNS peer on 127.0.0.1 (a UDP socket, packets encoded and decoded by
 * `dns-packet`, the encoding library of multicast-dns and bonjour), so resolvers are
 * tested against the protocol rather than a stub of their own API.
 */
export async function startDnsServer(zone: Record<string, DnsZoneEntry> = {}): Promise<TestDnsServer> {
  const entries = new Map(Object.entries(zone).map(([name, entry]) => [name.toLowerCase(), entry]));
  const queries: DnsQuerySeen[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (message: Buffer, from: RemoteInfo) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    queries.push({ name, type: question.type });
    const entry = entries.get(name);
    if (entry && 'silent' in entry) return;
    const family = question.type === 'A' ? 4 : question.type === 'AAAA' ? 6 : 0;
    const answers = (entry?.addresses ?? [])
      .filter((address) => (address.includes(':') ? 6 : 4) === family)
      .map((address) => ({
        type: family === 4 ? ('A' as const) : ('AAAA' as const),
        name: question.name,
        ttl: entry?.ttl ?? 60,
        data: address,
      }));
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (entry ? 0 : NXDOMAIN),
      questions: [question],
      answers,
    });
    socket.send(response, from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    queriesFor: (name) => queries.filter((q) => q.name === name.toLowerCase()),
    set: (name, entry) => void entries.set(name.toLowerCase(), entry),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
