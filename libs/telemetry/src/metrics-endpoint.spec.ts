import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { metricsPortOf, prometheusReader } from './metrics-endpoint.js';

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('METRICS_PORT', () => {
  it('is a port from 1 to 65535, or nothing when unset or empty', () => {
    expect(metricsPortOf(undefined)).toBeUndefined();
    expect(metricsPortOf('')).toBeUndefined();
    expect(metricsPortOf(' ')).toBeUndefined();
    expect(metricsPortOf('9464')).toBe(9464);
    expect(metricsPortOf('1')).toBe(1);
    expect(metricsPortOf('65535')).toBe(65535);
  });

  it.each(['0', '65536', '-1', '9464a', '94.64', 'http', '123456'])('refuses %p with its name and value', (value) => {
    expect(() => metricsPortOf(value)).toThrow(`METRICS_PORT must be a port from 1 to 65535, not '${value}'`);
  });
});

describe('the metrics endpoint', () => {
  it('answers GET /metrics in the Prometheus text format, and 404 elsewhere', async () => {
    const port = await freePort();
    const { reader, server } = prometheusReader(port, '127.0.0.1');
    const provider = new MeterProvider({ readers: [reader] });
    try {
      await once(server, 'listening');
      provider.getMeter('test').createCounter('strata.test.things').add(3, { kind: 'a' });
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toMatch(/^strata_test_things_total\{kind="a"\} 3$/m);
      expect((await fetch(`http://127.0.0.1:${port}/metrics/x`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'DELETE' })).status).toBe(404);
    } finally {
      await provider.shutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      metrics.disable();
    }
  });

  it('does not keep a process alive: a one-off command with METRICS_PORT set still ends', async () => {
    const port = await freePort();
    const telemetry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const t = await import(${JSON.stringify(telemetry)});
         t.startTelemetry(t.telemetryFromEnv('one-off'));
         process.stdout.write('started\\n');`,
      ],
      { env: { ...process.env, METRICS_PORT: String(port), HOST: '127.0.0.1', OTEL_EXPORTER_OTLP_ENDPOINT: '' } },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    clearTimeout(killer);
    expect({ code, signal, output }).toEqual({ code: 0, signal: null, output: 'started\n' });
  });
});
