import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ErrorCode, ID_FORMATS } from '@strata/contracts';
import { newInboundEventId, type KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf, StrataException } from '@strata/platform';
import { ArrivalDispatcher } from '../dispatch/arrival-dispatcher.js';
import { bodyOf, maskedHeaders } from '../events/arrival-params.js';
import { openArrival, sealArrival } from '../events/arrival-seal.js';
import { InboundEventsRepository } from '../events/inbound-events.repository.js';
import { InboundConfig } from '../inbound.config.js';
import type { InboundEventListQuery } from './dto/inbound-event-list.query.js';
import { MAX_BULK_REPLAY, type BulkReplayRequest } from './dto/bulk-replay.request.js';
import { ComputeLink } from '../arrivals/compute-link.js';
import { inboundEventRow } from './inbound-event-view.js';

export const INBOUND_EVENT_NOT_FOUND = 'Inbound event not found.';

/** Listing, inspecting and replaying a workspace's arrivals. */
@Injectable()
export class InboundEventsService {
  private readonly ring: KeyRing;

  constructor(
    private readonly events: InboundEventsRepository,
    private readonly dispatcher: ArrivalDispatcher,
    private readonly link: ComputeLink,
    private readonly clock: Clock,
    config: InboundConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  async list(scope: WorkspaceScope, q: InboundEventListQuery) {
    const limit = Math.min(100, Math.max(1, q.limit ?? 50));
    const offset = q.offset ?? 0;
    const since = q.since ? new Date(q.since) : undefined;
    const until = q.until ? new Date(q.until) : undefined;
    const { rows, total } = await this.events.list(scope, {
      triggerId: q.triggerId,
      signatureResult: q.signatureResult,
      dispatchStatus: q.dispatchStatus,
      since,
      until,
      limit,
      offset,
    });
    return { data: rows.map(inboundEventRow), meta: { total, limit, offset } };
  }

  /**
   * One arrival. Its body and headers (credential headers masked) only for a
   * caller who may reveal secrets (`secrets:reveal`): a webhook body is as
   * sensitive as a secret field.
   */
  async get(scope: WorkspaceScope, id: string, reveal: boolean) {
    const event = await this.find(scope, id);
    if (!reveal) return { data: { ...inboundEventRow(event), payloadRedacted: true } };
    const opened = openArrival(this.ring, event);
    return {
      data: {
        ...inboundEventRow(event),
        ...bodyOf(opened.body, event.contentType),
        headers: maskedHeaders(opened.headers),
      },
    };
  }

  /**
   * A replay's dry run: what replaying the arrival would run now (the trigger, its
   * function's current version, the auto-persist target), without running anything.
   */
  async dryRun(scope: WorkspaceScope, id: string) {
    const original = await this.find(scope, id);
    if (original.signatureResult === 'rejected') {
      throw StrataException.conflict('An arrival whose signature was rejected is never dispatched, nor replayed.');
    }
    const described = await this.link.describe(scope, original.triggerId);
    if (!described.found) throw StrataException.notFound('The trigger no longer exists.');
    const t = described.trigger;
    if (t.functionId === null || t.functionVersion === null) {
      throw StrataException.notFound(`Function not found for trigger: ${t.id}`);
    }
    return {
      data: {
        dryRun: true,
        inboundEventId: original.id,
        signatureResult: original.signatureResult,
        wouldRun: {
          triggerId: t.id,
          triggerName: t.name,
          paused: t.paused,
          functionId: t.functionId,
          functionVersion: t.functionVersion,
          autoPersist: original.signatureResult === 'verified' ? t.autoPersist : null,
        },
      },
    };
  }

  /**
   * Replays the arrivals matching a filter (a trigger or a time window required),
   * oldest first, at most `limit` (100); each as `replay` does. Every run counts
   * against the executions limit: replays over it are recorded as dropped.
   */
  async replayMany(scope: WorkspaceScope, q: BulkReplayRequest) {
    if (!q.triggerId && !q.since && !q.until) {
      throw StrataException.validation([
        { field: 'triggerId', message: 'name a trigger or a time window (since, until) to replay' },
      ]);
    }
    const since = q.since ? new Date(q.since) : undefined;
    const until = q.until ? new Date(q.until) : undefined;
    const limit = q.limit ?? MAX_BULK_REPLAY;
    const matched = await this.events.replayable(scope, {
      triggerId: q.triggerId,
      dispatchStatus: q.dispatchStatus,
      since,
      until,
      limit,
    });
    const replays: { inboundEventId?: string; replayedFrom: string; dispatchStatus: string; error?: string }[] = [];
    for (const id of matched) {
      try {
        const { data } = await this.replay(scope, id);
        replays.push({ inboundEventId: data.inboundEventId, replayedFrom: id, dispatchStatus: data.dispatchStatus });
      } catch (err) {
        const message = err instanceof StrataException ? err.message : 'The replay failed.';
        replays.push({ replayedFrom: id, dispatchStatus: 'dropped_dispatch', error: message });
        if (!(err instanceof StrataException) || err.status >= 500) break;
      }
    }
    const queued = replays.filter((r) => r.dispatchStatus === 'queued').length;
    return { data: { matched: matched.length, queued, dropped: replays.length - queued, replays } };
  }

  /**
   * A replay: a new arrival with the original's body, headers and signature
   * result (no new signature check), dispatched now through the trigger's current
   * function. 404 when the trigger or its function is gone (the new row is removed).
   */
  async replay(scope: WorkspaceScope, id: string) {
    const original = await this.find(scope, id);
    if (original.signatureResult === 'rejected') {
      throw StrataException.conflict('An arrival whose signature was rejected is never dispatched, nor replayed.');
    }
    const opened = openArrival(this.ring, original);
    const newId = newInboundEventId();
    const sealed = sealArrival(this.ring, newId, opened.body, opened.headers);
    const { event: replayed } = await this.events.insert(scope, {
      ...original,
      id: newId,
      dispatchStatus: 'received',
      dispatchError: null,
      replayedFrom: original.id,
      payload: sealed.payload,
      headers: sealed.headers,
      keyVersion: sealed.keyVersion,
      runId: null,
      jobId: randomUUID(),
      // The trigger's current auto-persist applies (compute answers `skipped` when it has none).
      persistStatus: original.signatureResult === 'verified' ? 'pending' : null,
      persistedRecordId: null,
      persistError: null,
      receivedAt: this.clock.now(),
      dispatchedAt: null,
      // A replay is a capture of its own: it never takes the delivery id of the arrival it repeats.
      deliveryId: null,
    });
    const reply = await this.dispatcher.dispatch(scope, replayed);
    if (reply.status === 'dropped' && reply.notFound) {
      await this.events.remove(scope, newId);
      throw StrataException.notFound(reply.reason);
    }
    if (reply.status === 'dropped') {
      throw new StrataException(ErrorCode.CONFLICT, `The replay was not queued: ${reply.reason} (kept as ${newId})`);
    }
    return {
      data: {
        inboundEventId: newId,
        correlationId: replayed.correlationId,
        replayedFrom: original.id,
        dispatchStatus: 'queued' as const,
        executionId: reply.jobId,
      },
    };
  }

  private async find(scope: WorkspaceScope, id: string) {
    if (!ID_FORMATS.inboundEventId.test(id)) throw StrataException.notFound(INBOUND_EVENT_NOT_FOUND);
    const event = await this.events.find(scope, id);
    if (!event) throw StrataException.notFound(INBOUND_EVENT_NOT_FOUND);
    return event;
  }
}
