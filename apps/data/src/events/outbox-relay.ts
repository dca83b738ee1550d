import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import {
  EVENT_ID_HEADER,
  recordEventsStream,
  routedMessageId,
  routedRecordEventSubject,
  routedRecordEventsStream,
} from '@strata/contracts';
import { ensureStream, publishAll, type OutgoingMessage } from '@strata/events';
import { Transactions } from '@strata/db';
import { NatsConnectionHolder, PeriodicTask } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import { OutboxRepository, type PendingEvent } from './outbox.repository.js';

/**
 * Publishes data.outbox rows to JetStream, oldest first, with `Nats-Msg-Id` set
 * to the row id, and deletes them in the same transaction. Rows are claimed
 * with FOR UPDATE SKIP LOCKED, so replicas share the work. A crash (or a failed
 * publish) before the commit leaves the rows in place and they are published
 * again; the stream drops a repeat as a duplicate (inside its duplicate window,
 * two minutes), so consumers see each event once.
 *
 * The replica that wrote an event wakes its own relay once the write has
 * committed ({@link WakeOutboxRelay}), so events leave at once; the poll every
 * DATA_OUTBOX_INTERVAL_MS picks up the rest (a replica that died before
 * publishing, a replica without a relay). A NOTIFY at commit would wake every
 * replica, but PostgreSQL serialises the commits of notifying transactions on
 * one lock: it cost a third of the write throughput.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly transactions: Transactions,
    private readonly outbox: OutboxRepository,
    private readonly nats: NatsConnectionHolder,
    private readonly config: DataConfig,
  ) {
    this.task = new PeriodicTask('outbox relay', config.DATA_OUTBOX_INTERVAL_MS, () => this.drain());
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.DATA_OUTBOX_RELAY_ENABLED) return;
    const nc = await this.nats.get();
    await ensureStream(nc, recordEventsStream(this.config.NATS_PREFIX));
    await ensureStream(nc, routedRecordEventsStream(this.config.NATS_PREFIX));
    this.task.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** Publishes pending events now (after the pass in flight); nothing when this replica does not relay. */
  wake(): void {
    this.task.wake();
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

  /**
   * Takes the oldest pending rows out of the outbox and publishes them, in one
   * transaction: the rows are gone only if every publish was acknowledged. They
   * go out together (one write to NATS, which keeps their order on the
   * connection), so a batch costs three statements and one round trip to NATS.
   */
  private async publishBatch(): Promise<number> {
    const nc = await this.nats.get();
    return this.transactions.run(async (tx) => {
      // Each payload goes out as the JSON text it was stored as, never parsed here.
      const rows = await this.outbox.take(tx, this.config.DATA_OUTBOX_BATCH_SIZE);
      await publishAll(nc, this.messagesOf(rows));
      return rows.length;
    });
  }

  /**
   * Each event to its subject on the records stream, and a routed copy to each
   * consumer interested in it (`<p>.routed.<consumer>.…`, message id
   * `<eventId>.<consumer>`, the event id in `Strata-Event-Id`). An event nobody
   * is interested in is one message, as before routing.
   */
  private messagesOf(rows: readonly PendingEvent[]): OutgoingMessage[] {
    const prefix = this.config.NATS_PREFIX;
    const messages: OutgoingMessage[] = [];
    for (const r of rows) {
      messages.push({ subject: r.subject, payload: r.payload, msgId: r.id });
      for (const consumer of r.consumers) {
        messages.push({
          subject: routedRecordEventSubject(prefix, consumer, r.subject),
          payload: r.payload,
          msgId: routedMessageId(r.id, consumer),
          headers: { [EVENT_ID_HEADER]: r.id },
        });
      }
    }
    return messages;
  }
}
