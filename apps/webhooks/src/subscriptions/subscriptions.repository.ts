import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { SubscriptionOwner, SubscriptionRow } from './subscription.js';

export interface NewSubscription {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly recordSlugs: readonly string[] | null;
  readonly active: boolean;
  readonly sealedSecret: string;
  readonly createdBy: SubscriptionOwner;
}

/** What an update may change; absent fields stay. `recordSlugs: null` clears the collection filter. */
export interface SubscriptionChanges {
  readonly name?: string | undefined;
  readonly url?: string | undefined;
  readonly events?: readonly string[] | undefined;
  readonly recordSlugs?: readonly string[] | null | undefined;
  readonly active?: boolean | undefined;
}

/** A subscription with the previous secret while its rotation grace lasts (else null). */
export type SigningSubscription = SubscriptionRow & { sealed_previous_secret: string | null };

/**
 * webhooks.subscriptions (and the deliveries a deletion stops), always within
 * one workspace: every statement carries `workspace_slug = scope.workspace`.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * `created_at` is the insert's own instant (`clock_timestamp()`), not the
   * transaction's start: the transaction adds the subscription's event interest
   * before this, so an event written after `created_at` (which the subscription
   * is owed) was written after the interest existed, and was routed to us
   * (docs/events.md, "Routed events").
   */
  async insert(scope: WorkspaceScope, tx: Tx, s: NewSubscription): Promise<SubscriptionRow> {
    const [row] = await managerOf(this.db, tx).query<SubscriptionRow[]>(
      `INSERT INTO webhooks.subscriptions
         (id, workspace_slug, name, url, events, record_slugs, active, secret, created_by, created_by_type, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, clock_timestamp()) RETURNING *`,
      [
        s.id,
        scope.workspace,
        s.name,
        s.url,
        s.events,
        s.recordSlugs,
        s.active,
        s.sealedSecret,
        s.createdBy.id,
        s.createdBy.type,
      ],
    );
    return row!;
  }

  /** A subscription of the workspace, deleted ones too when asked; locked in `tx` when asked. */
  async find(
    scope: WorkspaceScope,
    id: string,
    options: { tx?: Tx; includeDeleted?: boolean; lock?: 'share' | 'update' } = {},
  ): Promise<SubscriptionRow | undefined> {
    const [row] = await managerOf(this.db, options.tx).query<SubscriptionRow[]>(
      `SELECT * FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2
         ${options.includeDeleted ? '' : 'AND deleted_at IS NULL'}
         ${options.lock === 'share' ? 'FOR SHARE' : options.lock === 'update' ? 'FOR UPDATE' : ''}`,
      [scope.workspace, id],
    );
    return row;
  }

  /** A live subscription with the secrets it signs with at `now`, locked FOR SHARE in `tx`. */
  async findForSigning(scope: WorkspaceScope, tx: Tx, id: string, now: Date): Promise<SigningSubscription | undefined> {
    const [row] = await managerOf(this.db, tx).query<SigningSubscription[]>(
      `SELECT *, CASE WHEN previous_secret_valid_until > $3 THEN previous_secret END AS sealed_previous_secret
         FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL FOR SHARE`,
      [scope.workspace, id, now],
    );
    return row;
  }

  list(scope: WorkspaceScope): Promise<SubscriptionRow[]> {
    return this.db.query<SubscriptionRow[]>(
      'SELECT * FROM webhooks.subscriptions WHERE workspace_slug = $1 AND deleted_at IS NULL ORDER BY created_at, id',
      [scope.workspace],
    );
  }

  async update(
    scope: WorkspaceScope,
    id: string,
    c: SubscriptionChanges,
    tx?: Tx,
  ): Promise<SubscriptionRow | undefined> {
    const rows = rowsOf<SubscriptionRow>(
      await managerOf(this.db, tx).query(
        `UPDATE webhooks.subscriptions SET
           name = COALESCE($3, name), url = COALESCE($4, url), events = COALESCE($5, events),
           record_slugs = CASE WHEN $6::boolean THEN $7::text[] ELSE record_slugs END,
           active = COALESCE($8, active), updated_at = now()
         WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL RETURNING *`,
        [
          scope.workspace,
          id,
          c.name ?? null,
          c.url ?? null,
          c.events ?? null,
          c.recordSlugs !== undefined,
          c.recordSlugs ?? null,
          c.active ?? null,
        ],
      ),
    );
    return rows[0];
  }

  /**
   * Soft delete (the row stays for its deliveries' history), and its deliveries
   * still retrying stop, failed with `reason`. Whether it was deleted now.
   */
  async softDelete(scope: WorkspaceScope, tx: Tx, id: string, reason: string): Promise<boolean> {
    const db = managerOf(this.db, tx);
    const rows = rowsOf<{ id: string }>(
      await db.query(
        `UPDATE webhooks.subscriptions SET deleted_at = now(), active = false, updated_at = now()
         WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL RETURNING id`,
        [scope.workspace, id],
      ),
    );
    if (!rows[0]) return false;
    await db.query(
      `UPDATE webhooks.deliveries SET status = 'failed', last_error = $3, next_attempt_at = NULL,
              leased = false, completed_at = now(), updated_at = now()
        WHERE workspace_slug = $1 AND subscription_id = $2 AND status = 'retrying'`,
      [scope.workspace, id, reason],
    );
    return true;
  }

  /** A new sealed secret; the current one becomes the previous, valid `graceSeconds` past `now`. */
  async rotate(
    scope: WorkspaceScope,
    tx: Tx,
    id: string,
    sealedSecret: string,
    graceSeconds: number,
    now: Date,
  ): Promise<SubscriptionRow | undefined> {
    const rows = rowsOf<SubscriptionRow>(
      await managerOf(this.db, tx).query(
        `UPDATE webhooks.subscriptions SET secret = $3, previous_secret = secret,
           previous_secret_valid_until = $5::timestamptz + make_interval(secs => $4), updated_at = now()
         WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL RETURNING *`,
        [scope.workspace, id, sealedSecret, graceSeconds, now],
      ),
    );
    return rows[0];
  }
}
