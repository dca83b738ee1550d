import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { LoggerService } from '@nestjs/common';
import { loadConfig } from '@strata/platform';
import { eventually } from '@strata/testing';
import { GatewayConfig, createGateway, listen } from '../src/index.js';

/**
 * A stand-in for a service, speaking just enough HTTP/1.1 over a raw socket to
 * control what a real server leaves to timing: it announces `Keep-Alive:
 * timeout=<announced>` and never closes an idle connection itself; with
 * `resetReused` it drops a reused connection when the next request arrives on
 * it, as a service does when it closes an idle socket just as a request is sent.
 */
class FakeService {
  readonly connections: { socket: Socket; requests: number; closedByPeer: boolean }[] = [];
  private server: TcpServer | undefined;

  constructor(private readonly options: { announcedSeconds: number; resetReused: boolean }) {}

  async start(): Promise<string> {
    this.server = createTcpServer((socket) => {
      const connection = { socket, requests: 0, closedByPeer: false };
      this.connections.push(connection);
      let buffered = '';
      socket.on('end', () => {
        connection.closedByPeer = true;
        socket.end();
      });
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        for (;;) {
          const end = buffered.indexOf('\r\n\r\n');
          if (end === -1) return;
          const head = buffered.slice(0, end);
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          if (buffered.length < end + 4 + length) return;
          buffered = buffered.slice(end + 4 + length);
          connection.requests += 1;
          if (this.options.resetReused && connection.requests > 1) {
            socket.destroy();
            return;
          }
          const body = JSON.stringify({ ok: true, connection: this.connections.indexOf(connection) });
          socket.write(
            `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
              `connection: keep-alive\r\nkeep-alive: timeout=${this.options.announcedSeconds}\r\n\r\n${body}`,
          );
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address() as { port: number };
    return `http://127.0.0.1:${address.port}`;
  }

  async stop(): Promise<void> {
    for (const c of this.connections) c.socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

class CapturingLogger implements LoggerService {
  readonly entries: unknown[] = [];
  log(message: unknown): void {
    this.entries.push(message);
  }
  error(message: unknown): void {
    this.entries.push(message);
  }
  warn(message: unknown): void {
    this.entries.push(message);
  }
}

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.secret-looking-token.sig';
const PATH = '/data/workspace/acme/api/v1/records/6f1c2f43-3c1e-4c4b-9d1a-2a0f6b1b7a10';

describe('gateway → service connections', () => {
  let service: FakeService | undefined;
  let gateway: Server | undefined;

  afterEach(async () => {
    await new Promise<void>((resolve) => {
      if (!gateway) return resolve();
      gateway.close(() => resolve());
      gateway.closeAllConnections();
    });
    await service?.stop();
    gateway = undefined;
    service = undefined;
  });

  async function start(options: { announcedSeconds: number; resetReused: boolean }) {
    service = new FakeService(options);
    const upstream = await service.start();
    const logger = new CapturingLogger();
    const config = loadConfig(GatewayConfig, { STRATA_ENV: 'development', DATA_SERVICE_URL: upstream });
    gateway = await listen(createGateway(config, logger), 0, '127.0.0.1');
    const base = `http://127.0.0.1:${(gateway.address() as { port: number }).port}`;
    const send = (method: string, requestId: string) =>
      fetch(`${base}${PATH}?apiKey=query-secret`, {
        method,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'x-request-id': requestId,
          ...(method === 'PATCH' ? { 'content-type': 'application/json' } : {}),
        },
        ...(method === 'PATCH' ? { body: JSON.stringify({ data: { n: 1 } }) } : {}),
      });
    return { service, logger, send };
  }

  it('closes an idle socket itself before the keep-alive timeout the service announced', async () => {
    // The service promises to keep idle connections 2 s and never closes them here:
    // only the gateway closing its side (1 s before the promise) ends the connection.
    const { service, send } = await start({ announcedSeconds: 2, resetReused: false });
    expect((await send('GET', 'req-idle-0001')).status).toBe(200);
    expect(service.connections).toHaveLength(1);
    await eventually(() => (service.connections[0]!.closedByPeer ? true : undefined));
  });

  it('sends a safe request once more when its reused socket is reset, and never a PATCH; logs both with the request id', async () => {
    const { service, logger, send } = await start({ announcedSeconds: 30, resetReused: true });
    expect((await send('GET', 'req-first-0001')).status).toBe(200);

    const get = await send('GET', 'req-get-00002');
    expect(get.status).toBe(200);
    expect(service.connections.length).toBe(2);

    const patch = await send('PATCH', 'req-patch-0003');
    expect(patch.status).toBe(502);
    expect(await patch.json()).toMatchObject({
      error: 'Bad Gateway',
      code: 'BAD_GATEWAY',
      message: 'The data service is unavailable',
      requestId: 'req-patch-0003',
    });

    expect(logger.entries).toEqual([
      expect.objectContaining({ requestId: 'req-get-00002', method: 'GET', service: 'data', reusedSocket: true }),
      expect.objectContaining({ requestId: 'req-patch-0003', method: 'PATCH', service: 'data', reusedSocket: true }),
    ]);
    const logged = JSON.stringify(logger.entries);
    expect(logged).not.toContain(TOKEN);
    expect(logged).not.toContain('query-secret');
  });

  it('logs a service that cannot be reached and answers 503', async () => {
    const { logger, send } = await start({ announcedSeconds: 30, resetReused: false });
    await service!.stop();
    const res = await send('GET', 'req-down-00001');
    expect(res.status).toBe(503);
    expect(logger.entries).toEqual([
      expect.objectContaining({ requestId: 'req-down-00001', service: 'data', code: 'ECONNREFUSED' }),
    ]);
  });
});
