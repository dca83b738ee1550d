import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { eventually } from '@strata/testing';

/** One request as the receiver saw it, verified with the off-the-shelf Standard Webhooks library. */
export interface Arrival {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly rawBody: string;
  readonly body: Record<string, unknown>;
  /** Names of the trusted secrets whose verification of this request passed. */
  readonly verifiedBy: string[];
  /** Whether the Svc-* family repeats the webhook-* values exactly. */
  readonly familiesAgree: boolean;
  readonly at: number;
}

/** What the receiver does with a request: answer with a status (and body), or never answer. */
export type Reply = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/**
 * A webhook receiver in the test process: records every arrival, verifies it
 * with the `standardwebhooks` library against each trusted secret, and answers
 * as the test says. It can be stopped and started again on the same port.
 */
export class WebhookReceiver {
  readonly arrivals: Arrival[] = [];
  private readonly trusted = new Map<string, Webhook>();
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  reply: (arrival: Arrival) => Reply = () => ({ status: 204 });

  private constructor(private port: number) {}

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(0);
    await receiver.listen();
    return receiver;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  trust(name: string, secret: string): void {
    this.trusted.set(name, new Webhook(secret));
  }

  /** Arrivals carrying this webhook-id, in order. */
  of(deliveryId: string): Arrival[] {
    return this.arrivals.filter((a) => a.headers['webhook-id'] === deliveryId);
  }

  async waitFor(match: (a: Arrival) => boolean, count = 1, timeoutMs = 15_000): Promise<Arrival[]> {
    return eventually(() => {
      const found = this.arrivals.filter(match);
      return found.length >= count ? found : undefined;
    }, timeoutMs);
  }

  async listen(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
    const verifiedBy = [...this.trusted].filter(([, hook]) => verifies(hook, rawBody, headers)).map(([n]) => n);
    const familiesAgree =
      headers['svc-id'] === headers['webhook-id'] &&
      headers['svc-timestamp'] === headers['webhook-timestamp'] &&
      headers['svc-signature'] === headers['webhook-signature'];
    const arrival: Arrival = {
      path: req.url ?? '/',
      headers,
      rawBody,
      body: JSON.parse(rawBody) as Record<string, unknown>,
      verifiedBy,
      familiesAgree,
      at: Date.now(),
    };
    this.arrivals.push(arrival);
    const reply = this.reply(arrival);
    if (reply === 'hang') {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    res.writeHead(reply.status, reply.headers ?? {});
    res.end(reply.body ?? '');
  }
}

function verifies(hook: Webhook, body: string, headers: Record<string, string>): boolean {
  try {
    hook.verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

/** A header of an arrival, by its name in any case. */
export function header(a: Arrival, name: string): string | undefined {
  return a.headers[name.toLowerCase()];
}

/** Receivers started by one test file, each its own origin (so breakers never cross tests); stopped together. */
export class Receivers {
  private readonly started: WebhookReceiver[] = [];

  async start(): Promise<WebhookReceiver> {
    const r = await WebhookReceiver.start();
    this.started.push(r);
    return r;
  }

  async stopAll(): Promise<void> {
    for (const r of this.started) await r.stop();
  }
}
