import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { newUuid } from '@strata/crypto';
import { rowsOf } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import { refusedReceiver } from '../receivers/receiver-address.js';
import { WebhooksConfig } from '../webhooks.config.js';
import type { CreateSubscriptionRequest, UpdateSubscriptionRequest } from './dto/subscription.requests.js';
import { toSubscription, type Subscription, type SubscriptionRow } from './subscription.js';
import { SubscriptionIdempotency } from './subscription-idempotency.js';
import { SubscriptionSecrets } from './subscription-secrets.js';

const notFound = (id: string) => StrataException.notFound(`Webhook subscription ${id} not found`);

/** Webhook subscriptions of a workspace; every query is scoped to the caller's workspace. */
@Injectable()
export class SubscriptionsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly secrets: SubscriptionSecrets,
    private readonly idempotency: SubscriptionIdempotency,
    private readonly config: WebhooksConfig,
    private readonly clock: Clock,
  ) {}

  /** Creates a subscription with a new secret, answered once (and again for a repeated Idempotency-Key). */
  async create(
    workspace: string,
    actor: string,
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
    return this.db.transaction(async (tx) => {
      if (idempotencyKey !== undefined) {
        const earlier = await this.idempotency.lookup(tx, workspace, idempotencyKey, request);
        if (earlier) {
          const [row] = await tx.query<SubscriptionRow[]>(
            'SELECT * FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2',
            [workspace, earlier],
          );
          if (row) return toSubscription(row, this.clock.now(), this.secrets.open(row.id, row.secret));
        }
      }
      const id = newUuid();
      const { secret, sealed } = this.secrets.issue(id);
      const [row] = await tx.query<SubscriptionRow[]>(
        `INSERT INTO webhooks.subscriptions (id, workspace_slug, name, url, events, record_slugs, active, secret, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        [
          id,
          workspace,
          request.name,
          request.url,
          request.events,
          emptyAsNull(request.recordSlugs),
          request.active,
          sealed,
          actor,
        ],
      );
      if (idempotencyKey !== undefined) await this.idempotency.remember(tx, workspace, idempotencyKey, request, id);
      return toSubscription(row!, this.clock.now(), secret);
    });
  }

  async list(workspace: string): Promise<{ data: Subscription[] }> {
    const rows = await this.db.query<SubscriptionRow[]>(
      'SELECT * FROM webhooks.subscriptions WHERE workspace_slug = $1 AND deleted_at IS NULL ORDER BY created_at, id',
      [workspace],
    );
    const now = this.clock.now();
    return { data: rows.map((r) => toSubscription(r, now)) };
  }

  async update(workspace: string, id: string, body: UpdateSubscriptionRequest): Promise<Subscription> {
    if (body.url !== undefined) this.checkReceiver(body.url);
    const rows = rowsOf<SubscriptionRow>(
      await this.db.query(
        `UPDATE webhooks.subscriptions SET
           name = COALESCE($3, name), url = COALESCE($4, url), events = COALESCE($5, events),
           record_slugs = CASE WHEN $6::boolean THEN $7::text[] ELSE record_slugs END,
           active = COALESCE($8, active), updated_at = now()
         WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL RETURNING *`,
        [
          workspace,
          id,
          body.name ?? null,
          body.url ?? null,
          body.events ?? null,
          body.recordSlugs !== undefined,
          emptyAsNull(body.recordSlugs ?? null),
          body.active ?? null,
        ],
      ),
    );
    if (!rows[0]) throw notFound(id);
    return toSubscription(rows[0], this.clock.now());
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
  async delete(workspace: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const rows = rowsOf<{ id: string }>(
        await tx.query(
          `UPDATE webhooks.subscriptions SET deleted_at = now(), active = false, updated_at = now()
           WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL RETURNING id`,
          [workspace, id],
        ),
      );
      if (!rows[0]) throw notFound(id);
      await tx.query(
        `UPDATE webhooks.deliveries SET status = 'failed', last_error = 'Subscription deleted', next_attempt_at = NULL,
                leased = false, completed_at = now(), updated_at = now()
          WHERE workspace_slug = $1 AND subscription_id = $2 AND status = 'retrying'`,
        [workspace, id],
      );
    });
  }

  /**
   * A new secret, active at once and answered once; the current one becomes the
   * previous secret and keeps signing for the grace period (24 hours, on the
   * service's clock). A second rotation inside the grace drops the oldest.
   */
  async rotateSecret(workspace: string, id: string): Promise<Subscription> {
    return this.db.transaction(async (tx) => {
      const [current] = await tx.query<SubscriptionRow[]>(
        'SELECT * FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE',
        [workspace, id],
      );
      if (!current) throw notFound(id);
      const { secret, sealed } = this.secrets.issue(id);
      const now = this.clock.now();
      const rows = rowsOf<SubscriptionRow>(
        await tx.query(
          `UPDATE webhooks.subscriptions SET secret = $2, previous_secret = secret,
             previous_secret_valid_until = $5::timestamptz + make_interval(secs => $3), updated_at = now()
           WHERE workspace_slug = $4 AND id = $1 RETURNING *`,
          [id, sealed, this.config.WEBHOOKS_ROTATION_GRACE_SECONDS, workspace, now],
        ),
      );
      return toSubscription(rows[0]!, now, secret);
    });
  }
}

function emptyAsNull(slugs: string[] | null): string[] | null {
  return slugs && slugs.length ? slugs : null;
}
