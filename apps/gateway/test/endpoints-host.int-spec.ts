import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '@strata/platform';
import { GatewayConfig, createGateway, listen } from '../src/index.js';

/** A stand-in service that answers its own name and the path it was asked. */
async function service(name: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ service: name, path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A GET with the Host header a browser would send for `host` (fetch does not let a caller set it). */
function get(port: number, host: string, path: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const ENDPOINT = '/data/workspace/acme/api/v1/endpoints/hello';
const RECORDS = '/data/workspace/acme/api/v1/records';

describe('endpoints on a host of their own (GATEWAY_ENDPOINTS_HOST)', () => {
  const servers: Server[] = [];
  let split: number;
  let shared: number;

  beforeAll(async () => {
    const worker = await service('compute-worker');
    const data = await service('data');
    servers.push(worker.server, data.server);
    const start = async (env: Record<string, string>) => {
      const config = loadConfig(GatewayConfig, {
        STRATA_ENV: 'development',
        LOG_LEVEL: 'error',
        DATA_SERVICE_URL: data.url,
        COMPUTE_WORKER_SERVICE_URL: worker.url,
        ...env,
      });
      const server = await listen(createGateway(config), 0, '127.0.0.1');
      servers.push(server);
      return (server.address() as AddressInfo).port;
    };
    split = await start({ GATEWAY_ENDPOINTS_HOST: 'endpoints.example.test' });
    shared = await start({});
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('routes endpoint calls on the endpoints host, and nothing else there', async () => {
    expect(await get(split, 'endpoints.example.test', ENDPOINT)).toEqual({
      status: 200,
      body: { service: 'compute-worker', path: ENDPOINT },
    });
    // The port and the case of a Host header do not make it another host.
    expect((await get(split, 'Endpoints.Example.Test:8443', ENDPOINT)).body.service).toBe('compute-worker');
    for (const path of [RECORDS, '/docs', '/workspace/api/v1/workspaces']) {
      const refused = await get(split, 'endpoints.example.test', path);
      expect(refused.status).toBe(404);
      expect(refused.body.message).toBe(`No route for GET ${path} on the endpoints host.`);
    }
  });

  it('answers endpoint calls on any other host 404, naming the endpoints host', async () => {
    const refused = await get(split, 'api.example.test', ENDPOINT);
    expect(refused).toEqual({
      status: 404,
      body: {
        error: 'Endpoint calls are served on the host endpoints.example.test, not on this one.',
        statusCode: 404,
      },
    });
    expect(await get(split, 'api.example.test', RECORDS)).toEqual({
      status: 200,
      body: { service: 'data', path: RECORDS },
    });
  });

  it('routes everything on every host when it is not set', async () => {
    expect((await get(shared, 'api.example.test', ENDPOINT)).body.service).toBe('compute-worker');
    expect((await get(shared, 'endpoints.example.test', RECORDS)).body.service).toBe('data');
  });
});
