import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { adminWorkspaceToken, startStack, type Stack } from '@strata/testkit';
import { Receivers } from './support/webhook-receiver.js';
import { WEBHOOK_TEST_SETTINGS, createSubscription, workspaceApi, type WorkspaceApi } from './support/webhooks.js';

/** Collects on demand, as a scrape of METRICS_PORT would (docs/runbooks.md, "Metrics"). */
class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

// The services of the stack run in this process: their instruments are made with this provider.
const reader = new CollectingReader();
const provider = new MeterProvider({ readers: [reader] });
metrics.setGlobalMeterProvider(provider);

let stack: Stack;
let api: WorkspaceApi;
const receivers = new Receivers();
const ws = `webhook-metrics-${Date.now().toString(36)}`;

beforeAll(async () => {
  stack = await startStack(WEBHOOK_TEST_SETTINGS);
  api = workspaceApi(stack, ws, await adminWorkspaceToken(stack, ws));
});

afterAll(async () => {
  await receivers.stopAll();
  await stack?.stop();
  await provider.shutdown();
  metrics.disable();
});

/** The data points of one instrument, as a collection finds them now. */
async function points(name: string): Promise<DataPoint<number | Histogram>[]> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]);
}

async function attempts(outcome: string): Promise<number> {
  const found = (await points('strata.webhooks.attempts')).filter((p) => p.attributes['outcome'] === outcome);
  return found.reduce((sum, p) => sum + (p.value as number), 0);
}

describe('webhook metrics', () => {
  it('counts attempts by outcome and times the ones sent, with none in flight after', async () => {
    const hook = await receivers.start();
    const sub = await createSubscription(api, { url: hook.url(), events: ['record_created'], recordSlugs: ['none'] });
    const ok = await api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_created', payload: {} });
    expect(ok.body).toMatchObject({ status: 'success' });
    hook.reply = () => ({ status: 503 });
    const failed = await api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_created', payload: {} });
    expect(failed.body).toMatchObject({ status: 'retrying', httpStatus: 503 });

    expect(await attempts('success')).toBe(1);
    expect(await attempts('failure')).toBe(1);
    const durations = await points('strata.webhooks.attempt.duration_seconds');
    expect(durations.map((p) => [p.attributes['outcome'], (p.value as Histogram).count]).sort()).toEqual([
      ['failure', 1],
      ['success', 1],
    ]);
    expect((await points('strata.webhooks.attempts.in_flight')).map((p) => p.value)).toEqual([0]);
    expect((await api('DELETE', `/webhook-subscriptions/${sub.id}`)).status).toBe(204);
  });
});
