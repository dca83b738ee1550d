import { Injectable } from '@nestjs/common';
import { recordEventSubject, type RecordEvent } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import type { Tx, WorkspaceScope } from '@strata/db';
import { ServiceConfig } from '@strata/platform';
import { OutboxRepository, type OutboxRow } from './outbox.repository.js';

/**
 * Record events go into data.outbox inside the transaction of the change they
 * tell about: the event exists exactly when the change does. The relay
 * publishes them.
 */
@Injectable()
export class Outbox {
  constructor(
    private readonly config: ServiceConfig,
    private readonly repository: OutboxRepository,
  ) {}

  async add(scope: WorkspaceScope, tx: Tx, event: RecordEvent): Promise<string> {
    const row = this.row(event);
    await this.repository.add(scope, tx, row);
    return row.id;
  }

  /** The outbox row of an event, for writes that send it in the same statement as the change. */
  row(event: RecordEvent): OutboxRow {
    const subject = recordEventSubject(this.config.NATS_PREFIX, event.workspaceSlug, event.recordSlug, event.event);
    return { id: newUuid(), subject, payload: event };
  }
}
