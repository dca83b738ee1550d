import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope } from '@strata/db';
import { runRecordEventConsumer, type RunningConsumer } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import type { JsonValue } from '@strata/workflow';
import { OrchestrationConfig } from '../orchestration.config.js';
import { OrchestrationInterests } from '../orchestrations/orchestration-interests.js';
import { ORCHESTRATION_EVENT_CONSUMER } from '../orchestrations/orchestration-interests.repository.js';
import { OrchestrationsRepository } from '../orchestrations/orchestrations.repository.js';
import { RunsService } from '../runs/runs.service.js';

interface RecordEvent {
  readonly event: string;
  readonly workspaceSlug: string;
  readonly recordSlug: string;
  readonly payload: JsonValue;
}

/** Narrows a message to a record event; anything else is terminated, not retried. */
function parseRecordEvent(payload: unknown): RecordEvent {
  const p = payload as Record<string, unknown> | null;
  if (
    typeof p !== 'object' ||
    p === null ||
    typeof p['event'] !== 'string' ||
    typeof p['workspaceSlug'] !== 'string' ||
    typeof p['recordSlug'] !== 'string'
  ) {
    throw new Error('not a record event');
  }
  return { event: p['event'], workspaceSlug: p['workspaceSlug'], recordSlug: p['recordSlug'], payload: p as JsonValue };
}

/**
 * Event-driven orchestration triggers: a durable pull consumer of the record
 * events routed to the orchestration service (`<prefix>_routed_orchestration`:
 * the collections its active event-driven orchestrations watch, docs/events.md,
 * "Routed events"), started after the interests were registered; the durable of
 * the whole records stream an earlier version used
 * (`<prefix>_orchestration_triggers`) is drained, then deleted. Each event starts a run of every
 * active orchestration of its workspace watching its name and collection, with
 * the event payload as the run's input; the (event, orchestration) pair is
 * written in the run's transaction, so a redelivery starts nothing twice.
 */
@Injectable()
export class OrchestrationEventConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OrchestrationEventConsumer');
  private consumer: RunningConsumer | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly orchestrations: OrchestrationsRepository,
    private readonly runs: RunsService,
    private readonly interests: OrchestrationInterests,
    private readonly config: OrchestrationConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.ORCHESTRATION_EVENT_TRIGGERS_ENABLED) return;
    this.consumer = runRecordEventConsumer(await this.nats.get(), {
      prefix: this.config.NATS_PREFIX,
      consumer: ORCHESTRATION_EVENT_CONSUMER,
      legacyDurable: 'orchestration_triggers',
      register: () => this.interests.replaceAll(),
      parse: parseRecordEvent,
      handle: (event, eventId) => this.handle(event, eventId),
      concurrency: 8,
      onError: (err, msg) =>
        this.logger.warn({ msg: 'record event not turned into runs', subject: msg.subject, err: String(err) }),
      onProgress: (what, err) =>
        this.logger.log({ msg: `record events: ${what}`, err: err === undefined ? undefined : String(err as Error) }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  private async handle(event: RecordEvent, eventId: string): Promise<void> {
    // The event's own workspace (our record stream, published by the data service for a change in it).
    const scope = issueWorkspaceScope(event.workspaceSlug);
    let watching = await this.orchestrations.watching(scope, event.event, event.recordSlug);
    if (watching.length === 0) {
      // Routed to us, so an orchestration watched the collection when the event was written: one may
      // still be committing (it added the interest first). Once its change is over, read again.
      await this.interests.settled(scope);
      watching = await this.orchestrations.watching(scope, event.event, event.recordSlug);
    }
    for (const orchestration of watching) {
      await this.runs.create(scope, orchestration, {
        input: event.payload,
        correlationId: null,
        triggerType: 'event-driven',
        triggerMetadata: { eventType: event.event },
        eventId,
      });
    }
  }
}
