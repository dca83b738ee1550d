import { Module } from '@nestjs/common';
import { EventInterestsDirectory } from './event-interests-directory.js';
import { EventInterestsRepository } from './event-interests.repository.js';

/** The record-event consumers' interests, which the outbox relay routes events by. */
@Module({ providers: [EventInterestsRepository, EventInterestsDirectory] })
export class EventInterestsModule {}
