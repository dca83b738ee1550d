import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpEgress } from '../src/worker/api/http-egress.js';
import { computeTestConfig } from './support/compute-config.js';

/**
 * `api.fetch`'s client against a local server that never answers: what the
 * function is told depends on which deadline passed, the exchange's own or the run's.
 */
describe('HttpEgress, when no answer comes', () => {
  let server: Server;
  let url: URL;
  // A loopback server: private destinations allowed, as for a local test platform.
  const egress = new HttpEgress(
    computeTestConfig({ COMPUTE_FETCH_ALLOW_PRIVATE: 'true', COMPUTE_FETCH_TIMEOUT_MS: '300' }),
  );
  const request = { method: 'GET', headers: {} };

  beforeAll(async () => {
    server = createServer(() => undefined); // takes the request, never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`);
  });

  afterAll(async () => {
    egress.onApplicationShutdown();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('says the exchange timed out when its own deadline passed while the run goes on', async () => {
    const run = new AbortController();
    await expect(egress.exchange(url, request, run.signal)).rejects.toThrow('no answer within 300 ms');
    expect(run.signal.aborted).toBe(false);
  });

  it('says the run ended when the run’s end cut the exchange off', async () => {
    const run = new AbortController();
    const exchange = egress.exchange(url, request, run.signal);
    run.abort();
    await expect(exchange).rejects.toThrow('the run ended before the answer came');
  });
});
