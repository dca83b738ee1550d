import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type DataPoint } from '@opentelemetry/sdk-metrics';

/** Collects on demand, as a scrape of METRICS_PORT would (docs/runbooks.md, "Metrics"). */
class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Counters of the auth instances this test file runs in its process. */
export interface CollectedCounters {
  /** The sum of a counter's points whose attributes include `attributes`. */
  counted(name: string, attributes?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

/** Makes the global meter provider one the test collects from: call it before the apps are created. */
export function collectCounters(): CollectedCounters {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  return {
    async counted(name, attributes = {}) {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((metric) => metric.descriptor.name === name)
        .flatMap((metric) => metric.dataPoints as DataPoint<number>[])
        .filter((p) => Object.entries(attributes).every(([key, value]) => p.attributes[key] === value))
        .reduce((sum, p) => sum + p.value, 0);
    },
    async stop() {
      await provider.shutdown();
      metrics.disable();
    },
  };
}
