import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { recordEventsStream } from '@strata/contracts';
import { listen, type Listener } from '@strata/db';
import { ensureStream, publishJson } from '@strata/events';
import { NatsConnectionHolder, PeriodicTask } from '@strata/platform';
import { DataConfig } from '../data.config.js';

interface OutboxRow {
  id: string;
  subject: string;
  payload: unknown;
}

/**
 * Publishes data.outbox rows to JetStream, oldest first, with `Nats-Msg-Id` set
 * to the row id, then marks them sent. Rows are claimed with FOR UPDATE SKIP
 * LOCKED, so replicas share the work. A crash after publishing and before
 * marking republishes the row on restart; the stream drops it as a duplicate
 * (inside its duplicate window), so consumers see each event once.
 * A NOTIFY on `data_outbox` at each commit that wrote rows wakes every relay;
 * the poll every DATA_OUTBOX_INTERVAL_MS is the fallback.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;
  private readonly logger = new Logger('OutboxRelay');
  private listener: Listener | undefined;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly nats: NatsConnectionHolder,
    private readonly config: DataConfig,
  ) {
    this.task = new PeriodicTask('outbox relay', config.DATA_OUTBOX_INTERVAL_MS, () => this.drain());
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.DATA_OUTBOX_RELAY_ENABLED) return;
    await ensureStream(await this.nats.get(), recordEventsStream(this.config.NATS_PREFIX));
    this.listener = await listen(
      this.config.DATABASE_URL,
      'data_outbox',
      () => this.task.wake(),
      (err) => this.logger.warn({ msg: 'outbox LISTEN connection failed; polling meanwhile', err: String(err) }),
    );
    this.task.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.close();
    await this.task.stop();
  }

  /** Publishes everything pending now; returns how many events were sent. */
  async drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      const batch = await this.publishBatch();
      sent += batch;
      if (batch < this.config.DATA_OUTBOX_BATCH_SIZE) return sent;
    }
  }

  private async publishBatch(): Promise<number> {
    const nc = await this.nats.get();
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<OutboxRow[]>(
        `SELECT id, subject, payload FROM data.outbox WHERE published_at IS NULL
          ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.config.DATA_OUTBOX_BATCH_SIZE],
      );
      for (const row of rows) await publishJson(nc, row.subject, row.payload, row.id);
      if (rows.length) {
        await tx.query('UPDATE data.outbox SET published_at = clock_timestamp() WHERE id = ANY($1::uuid[])', [
          rows.map((r) => r.id),
        ]);
      }
      return rows.length;
    });
  }
}
