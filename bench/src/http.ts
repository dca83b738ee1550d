import { Agent, request } from 'node:http';

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * The benchmarks' HTTP client: node:http over kept-alive connections. The
 * client shares the machine's cores with the service it measures, so it must
 * cost little per request; `fetch` (undici) cost the client process about
 * 0.45 ms of CPU per call, twice what the baseline's pg driver costs per row.
 */
export class BenchClient {
  private readonly agent: Agent;

  constructor(
    private readonly token: string,
    connections: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  send(method: string, url: string, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(payload === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
