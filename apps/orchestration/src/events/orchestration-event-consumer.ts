import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import { issueWorkspaceScope } from '@strata/db';
import { consumeRecordEvents, type RunningConsumer } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import type { JsonValue } from '@strata/workflow';
import { OrchestrationConfig } from '../orchestration.config.js';
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
 * Event-driven orchestration triggers: a durable pull consumer on the record
 * events (`<prefix>_orchestration_triggers`). Each event starts a run of every
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
    private readonly config: OrchestrationConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.ORCHESTRATION_EVENT_TRIGGERS_ENABLED) return;
    const nc = await this.nats.get();
    this.consumer = await consumeRecordEvents(nc, {
      prefix: this.config.NATS_PREFIX,
      name: 'orchestration_triggers',
      parse: parseRecordEvent,
      handle: (event, msg) => this.handle(event, msg),
      concurrency: 8,
      onError: (err, msg) =>
        this.logger.warn({ msg: 'record event not turned into runs', subject: msg.subject, err: String(err) }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  private async handle(event: RecordEvent, msg: JsMsg): Promise<void> {
    // The event's own workspace (our record stream, published by the data service for a change in it).
    const scope = issueWorkspaceScope(event.workspaceSlug);
    const eventId = msg.headers?.get('Nats-Msg-Id') || `seq:${msg.info.streamSequence}`;
    for (const orchestration of await this.orchestrations.watching(scope, event.event, event.recordSlug)) {
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
