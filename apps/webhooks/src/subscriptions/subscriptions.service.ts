import { Injectable } from '@nestjs/common';
import { newUuid } from '@strata/crypto';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import { refusedReceiver } from '../receivers/receiver-address.js';
import { WebhooksConfig } from '../webhooks.config.js';
import type { CreateSubscriptionRequest, UpdateSubscriptionRequest } from './dto/subscription.requests.js';
import { toSubscription, type Subscription, type SubscriptionOwner, type SubscriptionRow } from './subscription.js';
import { SubscriptionIdempotency } from './subscription-idempotency.js';
import { SubscriptionInterests } from './subscription-interests.js';
import { SubscriptionSecrets } from './subscription-secrets.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { WebhooksUsage } from '../usage/webhooks-usage.js';

const notFound = (id: string) => StrataException.notFound(`Webhook subscription ${id} not found`);

/** Webhook subscriptions of a workspace. */
@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly secrets: SubscriptionSecrets,
    private readonly idempotency: SubscriptionIdempotency,
    private readonly config: WebhooksConfig,
    private readonly clock: Clock,
    private readonly usage: WebhooksUsage,
    private readonly interests: SubscriptionInterests,
  ) {}

  /** Creates a subscription with a new secret, answered once (and again for a repeated Idempotency-Key). */
  async create(
    scope: WorkspaceScope,
    actor: SubscriptionOwner,
    body: CreateSubscriptionRequest,
    idempotencyKey?: string,
  ): Promise<Subscription> {
    this.checkReceiver(body.url);
    const request = {
      name: body.name,
      url: body.url,
      events: body.events,
      recordSlugs: body.recordSlugs ?? null,
      active: body.active ?? true,
    };
    return this.transactions.run(async (tx) => {
      if (idempotencyKey !== undefined) {
        const earlier = await this.idempotency.lookup(scope, tx, idempotencyKey, request);
        const row = earlier ? await this.subscriptions.find(scope, earlier, { tx, includeDeleted: true }) : undefined;
        if (row) return this.repeated(row);
      }
      // Within the workspace's plan (docs/plans.md), counted under a lock until `tx` ends.
      await this.usage.ensureRoom(scope, tx);
      // Its events are routed to us before the row exists (docs/events.md, "Routed events").
      if (request.active) await this.interests.widen(scope, tx, request.recordSlugs);
      const id = newUuid();
      const { secret, sealed } = this.secrets.issue(id);
      const row = await this.subscriptions.insert(scope, tx, {
        id,
        name: request.name,
        url: request.url,
        events: request.events,
        recordSlugs: emptyAsNull(request.recordSlugs),
        active: request.active,
        sealedSecret: sealed,
        createdBy: actor,
      });
      if (idempotencyKey !== undefined) await this.idempotency.remember(scope, tx, idempotencyKey, request, id);
      return toSubscription(row, this.clock.now(), secret);
    });
  }

  /**
   * A create repeated with its Idempotency-Key: the subscription it made, with
   * the secret the create issued while that is still the subscription's (a lost
   * answer is answered again). A subscription deleted since is not brought
   * back (409), and once its secret was rotated the answer carries none: the
   * create's secret no longer signs, and the rotation gave the new one.
   */
  private repeated(row: SubscriptionRow): Subscription {
    if (row.deleted_at !== null) {
      throw StrataException.conflict('The subscription this Idempotency-Key created has been deleted.');
    }
    const rotated = row.previous_secret !== null;
    return toSubscription(row, this.clock.now(), rotated ? undefined : this.secrets.open(row.id, row.secret));
  }

  async list(scope: WorkspaceScope): Promise<{ data: Subscription[] }> {
    const rows = await this.subscriptions.list(scope);
    const now = this.clock.now();
    return { data: rows.map((r) => toSubscription(r, now)) };
  }

  /**
   * A change that can make the subscription take events it did not (resumed,
   * other collections) adds the interest first, in its transaction; one that can
   * take some away narrows the workspace's interests after commit.
   */
  async update(scope: WorkspaceScope, id: string, body: UpdateSubscriptionRequest): Promise<Subscription> {
    if (body.url !== undefined) this.checkReceiver(body.url);
    const row = await this.transactions.run(async (tx) => {
      const current = await this.subscriptions.find(scope, id, { tx });
      if (!current) throw notFound(id);
      const recordSlugs = body.recordSlugs === undefined ? current.record_slugs : emptyAsNull(body.recordSlugs);
      if (body.active ?? current.active) await this.interests.widen(scope, tx, recordSlugs);
      return this.subscriptions.update(
        scope,
        id,
        {
          name: body.name,
          url: body.url,
          events: body.events,
          recordSlugs: body.recordSlugs === undefined ? undefined : emptyAsNull(body.recordSlugs),
          active: body.active,
        },
        tx,
      );
    });
    if (!row) throw notFound(id);
    if (body.active === false || body.recordSlugs !== undefined) await this.interests.narrow(scope);
    return toSubscription(row, this.clock.now());
  }

  /** Refuses a receiver on a private address unless the operator allows them. */
  private checkReceiver(url: string): void {
    const refused = refusedReceiver(url, this.config.WEBHOOKS_ALLOW_PRIVATE_RECEIVERS);
    if (refused) throw StrataException.validation([{ field: 'url', message: refused }]);
  }

  /**
   * Soft delete: the row stays for its deliveries' history (a replay of them
   * answers 409); deliveries still retrying stop, failed with `Subscription deleted`.
   */
  async delete(scope: WorkspaceScope, id: string): Promise<void> {
    const deleted = await this.transactions.run((tx) =>
      this.subscriptions.softDelete(scope, tx, id, 'Subscription deleted'),
    );
    if (!deleted) throw notFound(id);
    await this.interests.narrow(scope);
  }

  /**
   * A new secret, active at once and answered once; the current one becomes the
   * previous secret and keeps signing for the grace period (24 hours, on the
   * service's clock). A second rotation inside the grace drops the oldest.
   */
  async rotateSecret(scope: WorkspaceScope, id: string): Promise<Subscription> {
    return this.transactions.run(async (tx) => {
      if (!(await this.subscriptions.find(scope, id, { tx, lock: 'update' }))) throw notFound(id);
      const { secret, sealed } = this.secrets.issue(id);
      const now = this.clock.now();
      const grace = this.config.WEBHOOKS_ROTATION_GRACE_SECONDS;
      const row = await this.subscriptions.rotate(scope, tx, id, sealed, grace, now);
      if (!row) throw notFound(id);
      return toSubscription(row, now, secret);
    });
  }
}

function emptyAsNull(slugs: readonly string[] | null): string[] | null {
  return slugs && slugs.length ? [...slugs] : null;
}
