import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDnsServer } from '@strata/testing';
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

describe('HttpEgress names', () => {
  it('are resolved with COMPUTE_FETCH_DNS_SERVERS, and what they resolve to is judged', async () => {
    const dns = await startDnsServer({ 'hook.example.test': { addresses: ['127.0.0.1'], ttl: 60 } });
    const server = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const url = new URL(`http://hook.example.test:${port}/`);
    const settings = { COMPUTE_FETCH_DNS_SERVERS: dns.address, COMPUTE_FETCH_TIMEOUT_MS: '10000' };
    const strict = new HttpEgress(computeTestConfig(settings));
    const lenient = new HttpEgress(computeTestConfig({ ...settings, COMPUTE_FETCH_ALLOW_PRIVATE: 'true' }));
    try {
      const run = new AbortController().signal;
      await expect(strict.exchange(url, { method: 'GET', headers: {} }, run)).rejects.toThrow(
        'refused: hook.example.test resolves to a non-public address: 127.0.0.1 is in 127.0.0.0/8',
      );
      const answer = await lenient.exchange(url, { method: 'GET', headers: {} }, run);
      expect({ status: answer.status, body: answer.body.toString() }).toEqual({ status: 200, body: 'reached' });
      expect(dns.queriesFor('hook.example.test').length).toBeGreaterThan(0);
    } finally {
      strict.onApplicationShutdown();
      lenient.onApplicationShutdown();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await dns.close();
    }
  });
});
