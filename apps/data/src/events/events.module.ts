import { Module } from '@nestjs/common';
import { Outbox } from './outbox.js';
import { OutboxRelay } from './outbox-relay.js';
import { OutboxRepository } from './outbox.repository.js';

/** Record events: the transactional outbox and its relay to JetStream. */
@Module({
  providers: [OutboxRepository, Outbox, OutboxRelay],
  exports: [Outbox, OutboxRelay],
})
export class EventsModule {}
