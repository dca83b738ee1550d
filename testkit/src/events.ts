import { connect, type NatsConnection } from '@nats-io/transport-node';
import { recordEventsStream, type RecordEvent } from '@strata/contracts';
import { consumeJson, type RunningConsumer } from '@strata/events';
import { eventually } from '@strata/testing';

export interface SeenEvent {
  readonly subject: string;
  readonly msgId: string | undefined;
  readonly payload: RecordEvent;
}

/** A test consumer of the record-event stream: collects every event it sees. */
export class EventCollector {
  private constructor(
    readonly seen: SeenEvent[],
    private readonly nc: NatsConnection,
    private readonly consumer: RunningConsumer,
  ) {}

  static async start(natsPrefix: string, name = 'e2e'): Promise<EventCollector> {
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    const seen: SeenEvent[] = [];
    const consumer = await consumeJson(nc, {
      stream: recordEventsStream(natsPrefix).name,
      durable: `${natsPrefix}_${name}`,
      parse: (payload) => payload as RecordEvent,
      handle: async (payload, msg) => {
        seen.push({ subject: msg.subject, msgId: msg.headers?.get('Nats-Msg-Id'), payload });
      },
    });
    return new EventCollector(seen, nc, consumer);
  }

  /** Events about one record, in the order they arrived. */
  about(recordId: string): SeenEvent[] {
    return this.seen.filter((e) => 'recordId' in e.payload && e.payload.recordId === recordId);
  }

  /** Waits until `count` events match. */
  async waitFor(match: (e: SeenEvent) => boolean, count = 1, timeoutMs = 10_000): Promise<SeenEvent[]> {
    return eventually(() => {
      const found = this.seen.filter(match);
      return found.length >= count ? found : undefined;
    }, timeoutMs);
  }

  async stop(): Promise<void> {
    await this.consumer.stop();
    await this.nc.close();
  }
}
