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
    const id = newUuid();
    const subject = recordEventSubject(this.config.NATS_PREFIX, event.workspaceSlug, event.recordSlug, event.event);
    await tx.query('INSERT INTO data.outbox (id, subject, payload) VALUES ($1, $2, $3)', [id, subject, event]);
    return id;
  }
}
