import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { closeConnectionsWhenAnswered } from './graceful-close.js';

/** A server whose answers wait until `release` is called; clients keep their sockets open for minutes. */
async function slowServer(): Promise<{ server: Server; port: number; arrived: Promise<void>; release: () => void }> {
  let release = () => undefined as void;
  let arrive = () => undefined as void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const server = createServer((req, res) => {
    if (req.url !== '/slow') return void res.end('now');
    arrive();
    void released.then(() => res.end('late'));
  });
  closeConnectionsWhenAnswered(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, arrived, release };
}

function get(agent: Agent, port: number, path: string) {
  return new Promise<{ body: string; headers: IncomingMessage['headers'] }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ body, headers: res.headers }));
    })
      .on('error', reject)
      .end();
  });
}

describe('closeConnectionsWhenAnswered', () => {
  it('answers the requests in flight with Connection: close, and close() ends without waiting for the client', async () => {
    const { server, port, arrived, release } = await slowServer();
    const agent = new Agent({ keepAlive: true, timeout: 10 * 60_000 });
    try {
      // A kept-alive connection that is idle, and one whose request is in flight.
      expect((await get(agent, port, '/fast')).headers.connection).toBe('keep-alive');
      const slow = get(agent, port, '/slow');
      await arrived;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      release();
      const answered = await slow;
      expect(answered.body).toBe('late');
      expect(answered.headers.connection).toBe('close');
      // Without the hook this waits for the agent's ten-minute idle timeout (the test times out).
      await closed;
    } finally {
      agent.destroy();
    }
  });
});
