import { Injectable, Logger } from '@nestjs/common';
import { ErrorCode, EVERY_COLLECTION, type EventInterest } from '@strata/contracts';
import { Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { EventInterests, EventInterestsUnavailableError } from '@strata/events';
import { NatsConnectionHolder, StrataException } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';
import { SubscriptionInterestsRepository, WEBHOOKS_EVENT_CONSUMER } from './subscription-interests.repository.js';

/**
 * The webhooks service's record-event interests in the data service
 * (docs/events.md, "Routed events"; docs/webhooks.md): a subscription that
 * starts taking events (created active, resumed, given other collections)
 * adds its interest inside its transaction, under the workspace's interest
 * lock, before its row is written, so the relay routes every event written
 * after it; a change that narrows (pause, delete, fewer collections) replaces
 * the workspace's interests with what its live subscriptions need, after
 * commit. At start the whole set is replaced.
 */
@Injectable()
export class SubscriptionInterests {
  private readonly logger = new Logger('SubscriptionInterests');
  private client: EventInterests | undefined;

  constructor(
    private readonly transactions: Transactions,
    private readonly repository: SubscriptionInterestsRepository,
    private readonly nats: NatsConnectionHolder,
    private readonly config: WebhooksConfig,
  ) {}

  /**
   * Inside the transaction that makes a subscription take events, before it writes
   * them: holds the workspace's interest lock until `tx` ends and adds the interest.
   * The data service unreachable: 503, nothing written.
   */
  async widen(scope: WorkspaceScope, tx: Tx, recordSlugs: readonly string[] | null): Promise<void> {
    await this.repository.lock(tx, 'change', scope);
    const slugs = recordSlugs && recordSlugs.length > 0 ? recordSlugs : [EVERY_COLLECTION];
    try {
      await (await this.events()).add(slugs.map((recordSlug) => ({ workspaceSlug: scope.workspace, recordSlug })));
    } catch (err) {
      if (!(err instanceof EventInterestsUnavailableError)) throw err;
      this.logger.warn({ msg: 'event interest not added', workspace: scope.workspace, err: err.message });
      throw new StrataException(ErrorCode.UNAVAILABLE, 'The data service did not register the subscription’s events.');
    }
  }

  /**
   * After a change that may narrow committed: the workspace's interests become what
   * its live subscriptions need. A failure leaves a wider interest (routed events
   * that match nothing), narrowed at the next change or start: logged, not thrown.
   */
  async narrow(scope: WorkspaceScope): Promise<void> {
    try {
      await this.transactions.run(async (tx) => {
        await this.repository.lock(tx, 'change', scope);
        const interests = await this.repository.ofWorkspace(scope, tx);
        await (await this.events()).replaceWorkspace(scope.workspace, interests);
      });
    } catch (err) {
      this.logger.warn({ msg: 'event interest not narrowed', workspace: scope.workspace, err: String(err) });
    }
  }

  /** At start, before the routed consumer: every interest the subscriptions need, and no other. */
  async replaceAll(): Promise<EventInterest[]> {
    return this.transactions.run(async (tx) => {
      await this.repository.lockAll(tx);
      const interests = await this.repository.ofEveryWorkspace(tx);
      await (await this.events()).replaceAll(interests);
      return interests;
    });
  }

  /**
   * A routed event of the workspace matched no subscription: waits for the
   * workspace's interest changes in flight (the subscription that added the
   * interest it was routed by may not have committed yet), after which a read
   * sees it.
   */
  async settled(scope: WorkspaceScope): Promise<void> {
    await this.transactions.run((tx) => this.repository.lock(tx, 'settled', scope));
  }

  private async events(): Promise<EventInterests> {
    this.client ??= new EventInterests(await this.nats.get(), this.config.NATS_PREFIX, WEBHOOKS_EVENT_CONSUMER);
    return this.client;
  }
}
