import { Injectable, Logger } from '@nestjs/common';
import type { Collection, FailedRecordEvent, FailedRecordEventName } from '@strata/contracts';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { Outbox } from '../events/outbox.js';

export interface FailureContext {
  readonly collection: Pick<Collection, 'workspaceSlug' | 'recordSlug'> | undefined;
  readonly event: FailedRecordEventName;
  readonly actor: Pick<FailedRecordEvent, 'createdBy' | 'updatedBy' | 'deletedBy'>;
  readonly recordId?: string;
}

/**
 * `*_failed` events: when a write the platform refused (validation, conflict,
 * missing record) concerned a known collection, its failure is written to the
 * outbox in a transaction of its own (the write's transaction rolled back).
 * Unexpected errors (500s) are not events: they are logged with their request id.
 */
@Injectable()
export class FailureEvents {
  private readonly logger = new Logger('FailureEvents');

  constructor(
    private readonly transactions: Transactions,
    private readonly outbox: Outbox,
  ) {}

  async report(scope: WorkspaceScope, err: unknown, ctx: FailureContext): Promise<void> {
    if (!(err instanceof StrataException) || !ctx.collection) return;
    const event: FailedRecordEvent = {
      event: ctx.event,
      workspaceSlug: ctx.collection.workspaceSlug,
      recordSlug: ctx.collection.recordSlug,
      ...(ctx.recordId ? { recordId: ctx.recordId } : {}),
      error: { code: err.code, message: err.message },
      timestamp: new Date().toISOString(),
      ...ctx.actor,
    };
    try {
      await this.transactions.run((tx) => this.outbox.add(scope, tx, event));
    } catch (e) {
      this.logger.warn({ msg: 'could not record a failure event', event: ctx.event, err: String(e) });
    }
  }

  /** Runs `work`; when it throws, reports the failure with the collection it had reached, then rethrows. */
  async guard<T>(
    scope: WorkspaceScope,
    context: Omit<FailureContext, 'collection'>,
    work: (reached: (c: Pick<Collection, 'workspaceSlug' | 'recordSlug'>) => void) => Promise<T>,
  ): Promise<T> {
    let collection: Pick<Collection, 'workspaceSlug' | 'recordSlug'> | undefined;
    try {
      return await work((c) => (collection = c));
    } catch (err) {
      await this.report(scope, err, { ...context, collection });
      throw err;
    }
  }
}
