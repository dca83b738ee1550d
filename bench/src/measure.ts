/** Latency and throughput of `total` operations run `concurrency` at a time. */
export interface Measurement {
  readonly total: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export async function measure(
  total: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
): Promise<Measurement> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        await op(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { total, seconds, perSecond: total / seconds, p50Ms: at(0.5), p99Ms: at(0.99) };
}

export function describe(m: Measurement): string {
  return `${m.perSecond.toFixed(0).padStart(6)} rec/s  p50 ${m.p50Ms.toFixed(1).padStart(6)} ms  p99 ${m.p99Ms.toFixed(1).padStart(6)} ms  (${m.total} in ${m.seconds.toFixed(1)} s)`;
}
