import { context } from '@opentelemetry/api';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  jetstream,
  jetstreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { publishAll, type PublishResult } from './publish-batch.js';
import { extractTraceContext } from './trace-context.js';

const NANOS_PER_MS = 1_000_000;

export interface StreamSpec {
  readonly name: string;
  readonly subjects: string[];
  /** Window in which a repeated `Nats-Msg-Id` is dropped by the stream. */
  readonly duplicateWindowMs?: number;
  readonly maxAgeMs?: number;
  /** `workqueue`: a message is removed once acknowledged (one consumer takes each); default `limits`. */
  readonly retention?: 'limits' | 'workqueue';
}

export interface EnsureStreamOptions {
  /**
   * Whether this process may change the settings of the stream when it exists (default true):
   * its owner does; a consumer of another service's stream only makes it when it is missing,
   * and its NATS user is not allowed to change it (docs/events.md, "Who may do what").
   */
  readonly reshape?: boolean;
}

/**
 * Creates the stream, or updates its subjects and windows when it exists with
 * other ones (and `reshape` is not false). A stream already as asked is left
 * alone: no update on every start.
 */
export async function ensureStream(
  nc: NatsConnection,
  spec: StreamSpec,
  options: EnsureStreamOptions = {},
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const maxAgeMs = spec.maxAgeMs ?? 7 * 24 * 3_600_000;
  // JetStream refuses a duplicate window longer than the stream keeps messages.
  const duplicateWindowMs = Math.min(spec.duplicateWindowMs ?? 2 * 60_000, maxAgeMs);
  const config = {
    name: spec.name,
    subjects: spec.subjects,
    duplicate_window: duplicateWindowMs * NANOS_PER_MS,
    max_age: maxAgeMs * NANOS_PER_MS,
    retention: spec.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
  };
  let existing: StreamConfig;
  try {
    existing = (await jsm.streams.info(spec.name)).config;
  } catch (err) {
    if (!/stream not found/i.test(String((err as Error).message))) throw err;
    await jsm.streams.add(config);
    return;
  }
  if (options.reshape === false || sameShape(existing, config)) return;
  await jsm.streams.update(spec.name, config);
}

function sameShape(
  existing: StreamConfig,
  wanted: Pick<StreamConfig, 'subjects' | 'duplicate_window' | 'max_age' | 'retention'>,
) {
  return (
    [...(existing.subjects ?? [])].sort().join(' ') === [...wanted.subjects].sort().join(' ') &&
    existing.duplicate_window === wanted.duplicate_window &&
    existing.max_age === wanted.max_age &&
    existing.retention === wanted.retention
  );
}

export async function deleteStream(nc: NatsConnection, name: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(name).catch(() => undefined);
}

/**
 * Publishes a JSON payload with `Nats-Msg-Id` set to `msgId` (so a re-publish
 * after a crash is dropped by the stream) and the trace context in headers:
 * {@link publishAll} with one message.
 */
export async function publishJson<T>(
  nc: NatsConnection,
  subject: string,
  payload: T,
  msgId: string,
): Promise<PublishResult> {
  const [ack] = await publishAll(nc, [{ subject, payload: JSON.stringify(payload), msgId }]);
  return ack!;
}

export interface ConsumerSpec<T> {
  readonly stream: string;
  readonly durable: string;
  readonly filterSubject?: string;
  readonly ackWaitMs?: number;
  readonly maxDeliver?: number;
  /** Checks and narrows a payload; a payload it refuses is terminated, not retried. */
  readonly parse: (payload: unknown) => T;
  readonly handle: (payload: T, msg: JsMsg) => Promise<void>;
  /** Delay before a failed message is redelivered. */
  readonly retryDelayMs?: (deliveryCount: number) => number;
  readonly onError?: (err: unknown, msg: JsMsg) => void;
  /** Messages handled at once (default 1: in stream order). Above 1, order across messages is not kept. */
  readonly concurrency?: number;
  /** Read an existing durable as it is (its settings untouched) instead of making or updating it. */
  readonly bindExisting?: boolean;
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

/**
 * A durable pull consumer with explicit ack: a message is acked only after its
 * handler succeeds, nak'ed with a delay when it throws, and terminated when
 * its payload does not parse. The handler runs inside the publisher's trace.
 */
export async function consumeJson<T>(nc: NatsConnection, spec: ConsumerSpec<T>): Promise<RunningConsumer> {
  const jsm = await jetstreamManager(nc);
  if (!spec.bindExisting)
    await jsm.consumers.add(spec.stream, {
      durable_name: spec.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: (spec.ackWaitMs ?? 30_000) * NANOS_PER_MS,
      max_deliver: spec.maxDeliver ?? 10,
      ...(spec.filterSubject ? { filter_subject: spec.filterSubject } : {}),
    });
  const consumer = await jetstream(nc).consumers.get(spec.stream, spec.durable);
  const messages = await consumer.consume({ max_messages: Math.max(64, (spec.concurrency ?? 1) * 2) });
  const handleOne = async (msg: JsMsg): Promise<void> => {
    let payload: T;
    try {
      payload = spec.parse(msg.json());
    } catch (err) {
      spec.onError?.(err, msg);
      msg.term();
      return;
    }
    try {
      await context.with(extractTraceContext(msg.headers), () => spec.handle(payload, msg));
      msg.ack();
    } catch (err) {
      spec.onError?.(err, msg);
      msg.nak(spec.retryDelayMs?.(msg.info.deliveryCount) ?? 1000);
    }
  };
  const limit = Math.max(1, spec.concurrency ?? 1);
  const inFlight = new Set<Promise<void>>();
  const done = (async () => {
    for await (const msg of messages) {
      const handled = handleOne(msg).finally(() => inFlight.delete(handled));
      inFlight.add(handled);
      if (inFlight.size >= limit) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  })();
  return {
    async stop() {
      await messages.close();
      await done;
    },
  };
}
