import type { NatsConnection } from '@nats-io/transport-node';
import {
  eventInterestsAddSubject,
  eventInterestsReplaceSubject,
  type AddEventInterestsRequest,
  type EventInterest,
  type EventInterestsReply,
  type ReplaceEventInterestsRequest,
} from '@strata/contracts';

/** The data service did not record the interests (down, or it refused them): the change that needed them must not happen. */
export class EventInterestsUnavailableError extends Error {
  override readonly name = 'EventInterestsUnavailableError';
}

/**
 * A record-event consumer's client of its interests in the data service
 * (docs/events.md, "Routed events"). Each call is answered after the data
 * service committed, so an event whose write commits after `add` returned is
 * routed to the consumer.
 */
export class EventInterests {
  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    readonly consumer: string,
    private readonly timeoutMs = 5000,
  ) {}

  /** Adds interests (a union with those held). Call it before the change that needs them commits. */
  async add(interests: readonly EventInterest[]): Promise<void> {
    if (interests.length === 0) return;
    const request: AddEventInterestsRequest = { consumer: this.consumer, interests };
    await this.ask(eventInterestsAddSubject(this.prefix, this.consumer), request);
  }

  /** Makes the interests in `workspace` exactly `interests` (narrowing, after the change committed). */
  async replaceWorkspace(workspace: string, interests: readonly EventInterest[]): Promise<void> {
    const request: ReplaceEventInterestsRequest = { consumer: this.consumer, workspaceSlug: workspace, interests };
    await this.ask(eventInterestsReplaceSubject(this.prefix, this.consumer), request);
  }

  /** Makes every interest of the consumer exactly `interests` (at start). */
  async replaceAll(interests: readonly EventInterest[]): Promise<void> {
    const request: ReplaceEventInterestsRequest = { consumer: this.consumer, interests };
    await this.ask(eventInterestsReplaceSubject(this.prefix, this.consumer), request);
  }

  private async ask(subject: string, request: object): Promise<void> {
    let reply: EventInterestsReply;
    try {
      const msg = await this.nc.request(subject, JSON.stringify(request), { timeout: this.timeoutMs });
      reply = msg.json<EventInterestsReply>();
    } catch (err) {
      throw new EventInterestsUnavailableError(`the data service did not record the event interests: ${String(err)}`);
    }
    if ('error' in reply) {
      throw new EventInterestsUnavailableError(`the data service refused the event interests: ${reply.error}`);
    }
  }
}
