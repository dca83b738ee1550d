import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { recordEventSubject, type RecordEvent } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { ServiceConfig } from '@strata/platform';

/**
 * Writes record events into data.outbox inside the caller's transaction: the
 * event exists exactly when the change does. The relay publishes them.
 */
@Injectable()
export class Outbox {
  constructor(private readonly config: ServiceConfig) {}

  async add(tx: EntityManager, event: RecordEvent): Promise<string> {
    const row = this.row(event);
    await tx.query('INSERT INTO data.outbox (id, subject, payload) VALUES ($1, $2, $3)', [
      row.id,
      row.subject,
      row.payload,
    ]);
    return row.id;
  }

  /** The outbox row of an event, for callers that batch it with other writes. */
  row(event: RecordEvent): { id: string; subject: string; payload: RecordEvent } {
    const subject = recordEventSubject(this.config.NATS_PREFIX, event.workspaceSlug, event.recordSlug, event.event);
    return { id: newUuid(), subject, payload: event };
  }
}
