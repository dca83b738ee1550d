import { Logger } from '@nestjs/common';
import { ErrorCode, EVERY_COLLECTION, type EventInterest } from '@strata/contracts';
import type { Transactions, Tx, WorkspaceScope } from '@strata/db';
import { EventInterests, EventInterestsUnavailableError } from '@strata/events';
import { StrataException } from '../errors/strata.exception.js';
import type { NatsConnectionHolder } from '../nats/nats.provider.js';

/**
 * Where a consumer service reads the record-event interests its own rows need
 * (live triggers, active subscriptions or orchestrations), and the advisory
 * locks their changes take (`lockEventInterest` of @strata/db).
 */
export interface InterestSource {
  lock(tx: Tx, mode: 'change' | 'settled', scope: WorkspaceScope): Promise<void>;
  lockAll(tx: Tx): Promise<void>;
  ofWorkspace(scope: WorkspaceScope, tx: Tx): Promise<EventInterest[]>;
  /** Of every workspace: the whole set, at start. */
  ofEveryWorkspace(tx: Tx): Promise<EventInterest[]>;
}

/** Who a service's interests are for: its consumer name, and what holds them (for the 503's message). */
export interface ConsumerInterestsOptions {
  readonly prefix: string;
  readonly consumer: string;
  /** `trigger`, `subscription`, `orchestration`. */
  readonly holder: string;
}

/**
 * A consumer service's record-event interests in the data service (docs/events.md,
 * "Routed events"), one mechanism for every consumer: a row that starts needing a
 * collection's events adds its interest inside its transaction, under the
 * workspace's interest lock, before it is written, so the relay routes every event
 * written after it; a change that may narrow replaces the workspace's interests with
 * what its rows need, after commit; at start the whole set is replaced.
 */
export abstract class ConsumerInterests {
  private readonly logger: Logger;
  private client: EventInterests | undefined;

  protected constructor(
    private readonly transactions: Transactions,
    private readonly source: InterestSource,
    private readonly nats: NatsConnectionHolder,
    private readonly options: ConsumerInterestsOptions,
  ) {
    this.logger = new Logger(new.target.name);
  }

  /**
   * Inside the transaction that makes a row need events, before it writes it: holds
   * the workspace's interest lock until `tx` ends and adds the interest (one
   * collection, several, or every collection for none). The data service
   * unreachable: 503, nothing written.
   */
  async widen(scope: WorkspaceScope, tx: Tx, recordSlugs: string | readonly string[] | null): Promise<void> {
    await this.source.lock(tx, 'change', scope);
    const slugs =
      typeof recordSlugs === 'string' ? [recordSlugs] : recordSlugs?.length ? recordSlugs : [EVERY_COLLECTION];
    try {
      await (await this.events()).add(slugs.map((recordSlug) => ({ workspaceSlug: scope.workspace, recordSlug })));
    } catch (err) {
      if (!(err instanceof EventInterestsUnavailableError)) throw err;
      this.logger.warn({ msg: 'event interest not added', workspace: scope.workspace, err: err.message });
      throw new StrataException(
        ErrorCode.UNAVAILABLE,
        `The data service did not register the ${this.options.holder}’s events.`,
      );
    }
  }

  /**
   * After a change that may narrow committed: the workspace's interests become what its
   * rows need. A failure leaves a wider interest (routed events that match nothing),
   * narrowed at the next change or start: logged, not thrown.
   */
  async narrow(scope: WorkspaceScope): Promise<void> {
    try {
      await this.transactions.run(async (tx) => {
        await this.source.lock(tx, 'change', scope);
        const interests = await this.source.ofWorkspace(scope, tx);
        await (await this.events()).replaceWorkspace(scope.workspace, interests);
      });
    } catch (err) {
      this.logger.warn({ msg: 'event interest not narrowed', workspace: scope.workspace, err: String(err) });
    }
  }

  /** At start, before the routed consumer: every interest the rows need, and no other. */
  async replaceAll(): Promise<EventInterest[]> {
    return this.transactions.run(async (tx) => {
      await this.source.lockAll(tx);
      const interests = await this.source.ofEveryWorkspace(tx);
      await (await this.events()).replaceAll(interests);
      return interests;
    });
  }

  /**
   * A routed event of the workspace matched none of the rows: waits for the workspace's
   * interest changes in flight (the row that added the interest it was routed by may
   * not have committed yet), after which a read sees it.
   */
  async settled(scope: WorkspaceScope): Promise<void> {
    await this.transactions.run((tx) => this.source.lock(tx, 'settled', scope));
  }

  private async events(): Promise<EventInterests> {
    this.client ??= new EventInterests(await this.nats.get(), this.options.prefix, this.options.consumer);
    return this.client;
  }
}
