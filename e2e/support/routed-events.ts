import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { recordEventsStream, routedRecordEventsStream } from '@strata/contracts';

/** Counts of a stream's messages by subject, read through stream info (JetStream's own bookkeeping). */
export class StreamCounts {
  private constructor(private readonly nc: NatsConnection) {}

  static async open(): Promise<StreamCounts> {
    return new StreamCounts(await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' }));
  }

  get connection(): NatsConnection {
    return this.nc;
  }

  /** Messages on `<p>_routed_records` under `filter` (a subject with wildcards). */
  routed(prefix: string, filter: string): Promise<number> {
    return this.count(routedRecordEventsStream(prefix).name, filter);
  }

  /** Messages on `<p>_records` under `filter`. */
  records(prefix: string, filter: string): Promise<number> {
    return this.count(recordEventsStream(prefix).name, filter);
  }

  private async count(stream: string, filter: string): Promise<number> {
    const jsm = await jetstreamManager(this.nc);
    const info = await jsm.streams.info(stream, { subjects_filter: filter });
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
