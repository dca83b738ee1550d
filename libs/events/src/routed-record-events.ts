import { jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  EVENT_ID_HEADER,
  recordEventsStream,
  routedDurableName,
  routedRecordEventsFilter,
  routedRecordEventsStream,
} from '@strata/contracts';
import { consumeJson, ensureStream, type RunningConsumer } from './jetstream.js';

export interface RoutedRecordEventConsumerSpec<T> {
  /** The NATS prefix of the run (streams and durables are named after it). */
  readonly prefix: string;
  /** The consumer's name (`[a-z][a-z0-9_]{0,39}`), as it registers its interests; replicas sharing it share the events. */
  readonly consumer: string;
  readonly parse: (payload: unknown) => T;
  /** `eventId`: the event's own id (the outbox row's), the same on the records stream and routed. */
  readonly handle: (event: T, eventId: string, msg: JsMsg) => Promise<void>;
  readonly concurrency: number;
  readonly onError: (err: unknown, msg: JsMsg) => void;
}

/** Redelivery after 0.5 s, doubling up to 30 s, never given up: every record-event consumer's policy. */
const retryDelayMs = (count: number) => Math.min(30_000, 500 * 2 ** count);

/**
 * The id of a record event as a consumer took it: `Strata-Event-Id` on a routed
 * copy, `Nats-Msg-Id` on the records stream (both the outbox row's id); the
 * stream sequence when a publisher set neither.
 */
export function recordEventIdOf(msg: JsMsg): string {
  return msg.headers?.get(EVENT_ID_HEADER) || msg.headers?.get('Nats-Msg-Id') || `seq:${msg.info.streamSequence}`;
}

/**
 * A consumer of the record events routed to it (docs/events.md, "Routed
 * events"): the durable `<p>_routed_<consumer>` on `<p>_routed_records`, filtered
 * to `<p>.routed.<consumer>.>`, so it takes only the events of the workspaces
 * and collections it registered an interest in ({@link EventInterests}), pulled
 * in batches, each acked after its handler succeeds, with the retry policy of
 * every record-event consumer. The handler runs inside the publisher's trace.
 * Register the interests (`replaceAll`) before starting it.
 */
export async function consumeRoutedRecordEvents<T>(
  nc: NatsConnection,
  spec: RoutedRecordEventConsumerSpec<T>,
): Promise<RunningConsumer> {
  const stream = routedRecordEventsStream(spec.prefix);
  // The data service owns the stream and shapes it; a consumer makes it only when it is missing.
  await ensureStream(nc, stream, { reshape: false });
  return consumeJson(nc, {
    stream: stream.name,
    durable: routedDurableName(spec.prefix, spec.consumer),
    filterSubject: routedRecordEventsFilter(spec.prefix, spec.consumer),
    parse: spec.parse,
    handle: (event, msg) => spec.handle(event, recordEventIdOf(msg), msg),
    retryDelayMs,
    maxDeliver: -1,
    concurrency: spec.concurrency,
    onError: spec.onError,
  });
}

export interface LegacyRecordConsumerSpec<T> extends Omit<RoutedRecordEventConsumerSpec<T>, 'consumer'> {
  /** The legacy durable's name after the prefix (`webhooks`, `compute_triggers`, `orchestration_triggers`). */
  readonly durable: string;
  /** How often the durable's pending count is read (default 500 ms). */
  readonly pollMs?: number;
}

/**
 * The upgrade from a durable on the whole records stream (before routing): when
 * `<p>_<durable>` exists on `<p>_records`, it is consumed with the same handler
 * until it has nothing pending or unacknowledged, then deleted. Call it after
 * the interests were registered: every event published before then is still
 * handled here, every one after is routed (an event seen both ways is handled
 * once, the handlers being idempotent on the event id). Resolves when the
 * durable is gone (at once when there was none); `stop` ends it early, leaving
 * the durable for the next start.
 */
export async function drainLegacyRecordConsumer<T>(
  nc: NatsConnection,
  spec: LegacyRecordConsumerSpec<T>,
): Promise<{ drained: Promise<boolean>; stop(): Promise<void> }> {
  const stream = recordEventsStream(spec.prefix).name;
  const durable = `${spec.prefix}_${spec.durable}`;
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.consumers.info(stream, durable);
  } catch {
    return { drained: Promise.resolve(false), stop: async () => undefined };
  }
  const running = await consumeJson(nc, {
    stream,
    durable,
    bindExisting: true,
    parse: spec.parse,
    handle: (event, msg) => spec.handle(event, recordEventIdOf(msg), msg),
    retryDelayMs,
    maxDeliver: -1,
    concurrency: spec.concurrency,
    onError: spec.onError,
  });
  let stopped = false;
  let wake: () => void = () => undefined;
  const drained = (async () => {
    while (!stopped) {
      const info = await jsm.consumers.info(stream, durable).catch(() => undefined);
      if (info && info.num_pending === 0 && info.num_ack_pending === 0) {
        await running.stop();
        await jsm.consumers.delete(stream, durable);
        return true;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, spec.pollMs ?? 500);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await running.stop();
    return false;
  })();
  return {
    drained,
    async stop() {
      stopped = true;
      wake();
      await drained.catch(() => undefined);
    },
  };
}

export interface RecordEventConsumerServiceSpec<T> extends RoutedRecordEventConsumerSpec<T> {
  /** The legacy durable's name after the prefix, drained and deleted once the routed consumer runs. */
  readonly legacyDurable?: string;
  /** Replaces the consumer's whole interest set from its own database ({@link EventInterests.replaceAll}). */
  readonly register: () => Promise<unknown>;
  /** Told when the registration failed (it is tried again, after 0.5 s doubling to 30 s) and when the legacy durable went. */
  readonly onProgress?: (what: 'registration failed' | 'legacy drained' | 'legacy drain failed', err?: unknown) => void;
}

export interface RunningRecordEventConsumer extends RunningConsumer {
  /** Resolves once the interests are registered and the routed consumer runs. */
  readonly started: Promise<void>;
  /** Resolves once the legacy durable is drained and deleted (false: there was none, or it was stopped first). */
  readonly legacyDrained: Promise<boolean>;
}

/**
 * A service's record-event consumption, as every consumer runs it: registers its
 * interests (again until the data service answers), THEN starts its routed
 * consumer, THEN drains and deletes the durable it used on the whole records
 * stream before routing, if it exists. Returns at once; the start goes on in
 * the background (the events wait in the streams meanwhile).
 */
export function runRecordEventConsumer<T>(
  nc: NatsConnection,
  spec: RecordEventConsumerServiceSpec<T>,
): RunningRecordEventConsumer {
  let stopped = false;
  let routed: RunningConsumer | undefined;
  let legacy: { drained: Promise<boolean>; stop(): Promise<void> } | undefined;
  let wake: () => void = () => undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  let resolveLegacy: (drained: boolean) => void = () => undefined;
  const legacyDrained = new Promise<boolean>((resolve) => (resolveLegacy = resolve));
  const started = (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await spec.register();
        break;
      } catch (err) {
        spec.onProgress?.('registration failed', err);
        await pause(Math.min(30_000, 500 * 2 ** attempt));
      }
    }
    if (stopped) return;
    routed = await consumeRoutedRecordEvents(nc, spec);
    if (stopped || spec.legacyDurable === undefined) return resolveLegacy(false);
    legacy = await drainLegacyRecordConsumer(nc, { ...spec, durable: spec.legacyDurable });
    legacy.drained.then(
      (drained) => {
        if (drained) spec.onProgress?.('legacy drained');
        resolveLegacy(drained);
      },
      (err: unknown) => {
        spec.onProgress?.('legacy drain failed', err);
        resolveLegacy(false);
      },
    );
  })();
  started.catch((err: unknown) => {
    spec.onProgress?.('legacy drain failed', err);
    resolveLegacy(false);
  });
  return {
    started,
    legacyDrained,
    async stop() {
      stopped = true;
      wake();
      await started.catch(() => undefined);
      await legacy?.stop();
      await routed?.stop();
      resolveLegacy(false);
    },
  };
}
