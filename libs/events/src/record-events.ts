import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { recordEventsStream } from '@strata/contracts';
import { consumeJson, ensureStream, type RunningConsumer } from './jetstream.js';

export interface RecordEventConsumerSpec<T> {
  /** The NATS prefix of the run (streams and durables are named after it). */
  readonly prefix: string;
  /** The consumer's name after the prefix: `<prefix>_<name>`; replicas sharing it share the events. */
  readonly name: string;
  readonly parse: (payload: unknown) => T;
  readonly handle: (event: T, msg: JsMsg) => Promise<void>;
  readonly concurrency: number;
  readonly onError: (err: unknown, msg: JsMsg) => void;
}

/**
 * A durable consumer of the record events, as every service that reacts to them
 * runs one (webhook deliveries, function triggers, orchestration triggers): the
 * stream made if missing (never reshaped: that is the data service's), every event delivered until handled (a failure is
 * redelivered after 0.5 s, doubling up to 30 s), a payload that does not parse
 * terminated.
 */
export async function consumeRecordEvents<T>(
  nc: NatsConnection,
  spec: RecordEventConsumerSpec<T>,
): Promise<RunningConsumer> {
  const stream = recordEventsStream(spec.prefix);
  // The data service owns the stream and shapes it; a consumer makes it only when it is missing.
  await ensureStream(nc, stream, { reshape: false });
  return consumeJson(nc, {
    stream: stream.name,
    durable: `${spec.prefix}_${spec.name}`,
    parse: spec.parse,
    handle: spec.handle,
    retryDelayMs: (count) => Math.min(30_000, 500 * 2 ** count),
    maxDeliver: -1,
    concurrency: spec.concurrency,
    onError: spec.onError,
  });
}
