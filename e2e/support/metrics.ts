import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';

/** Collects on demand, as a scrape of METRICS_PORT would (docs/runbooks.md, "Metrics"). */
class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** What a test reads of the instruments of the services its stack runs in this process. */
export interface CollectedMetrics {
  /** The data points of one instrument, as a collection finds them now. */
  points(name: string): Promise<DataPoint<number | Histogram>[]>;
  /** The sum of a counter's points whose attributes include `attributes`. */
  counted(name: string, attributes: Record<string, string>): Promise<number>;
  /** Ends the collection and the global provider (afterAll). */
  stop(): Promise<void>;
}

/**
 * Makes the global meter provider one this test file collects from. Call it
 * before the stack starts: the services make their instruments with the
 * provider that is global then.
 */
export function collectMetrics(): CollectedMetrics {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  const points = async (name: string) => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]);
  };
  return {
    points,
    async counted(name, attributes) {
      const found = (await points(name)).filter((p) =>
        Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
      );
      return found.reduce((sum, p) => sum + (p.value as number), 0);
    },
    async stop() {
      await provider.shutdown();
      metrics.disable();
    },
  };
}
