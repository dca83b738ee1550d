import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { ErrorCode, isWorkspaceSlug, TRIGGER_PATH } from '@strata/contracts';
import {
  checkArrivalSignature,
  deliveryIdOf,
  newInboundEventId,
  signatureClaimOf,
  triggerSigningSecretBinding,
  type KeyRing,
} from '@strata/crypto';
import { issueWorkspaceScope } from '@strata/db';
import { Clock, keyRingOf, readRawBody, StrataException, WorkspacePlans } from '@strata/platform';
import { ArrivalDispatcher } from '../dispatch/arrival-dispatcher.js';
import { headersOf } from '../events/arrival-params.js';
import { sealArrival } from '../events/arrival-seal.js';
import type { DispatchStatus, InboundEventEntity } from '../events/inbound-event.entity.js';
import { InboundEventsRepository } from '../events/inbound-events.repository.js';
import { InboundConfig } from '../inbound.config.js';
import { ComputeLink } from './compute-link.js';
import { InboundMetrics } from '../metrics/inbound-metrics.js';

/** A caller's correlation id is kept when it is printable and short; otherwise one is made. */
const CORRELATION_ID = /^[\x21-\x7e]{1,200}$/;

/** The 202 of an accepted arrival. */
export interface Accepted {
  /** The job id of the arrival's run (`GET /function-runs?jobId=`), fixed before the run is queued. */
  executionId: string;
  inboundEventId: string;
  correlationId: string;
  dispatchStatus: DispatchStatus;
}

/**
 * `POST {data_base}/http-trigger/{path}`: finds the trigger (compute), reads the
 * raw body (413 past INBOUND_MAX_BODY_BYTES), checks the signature, stores the
 * arrival with its body and headers sealed, answers 202, and then hands it to
 * compute. A crash after the store loses nothing: the sweep dispatches arrivals
 * left `received`.
 */
/** Opened signing secrets kept at once (oldest out first). */
const MAX_OPENED_SECRETS = 10_000;

@Injectable()
export class ArrivalsService {
  private readonly ring: KeyRing;
  private readonly secrets = new Map<string, { secret: string | null; until: number }>();

  constructor(
    private readonly link: ComputeLink,
    private readonly events: InboundEventsRepository,
    private readonly dispatcher: ArrivalDispatcher,
    private readonly clock: Clock,
    private readonly config: InboundConfig,
    private readonly metrics: InboundMetrics,
    private readonly plans: WorkspacePlans,
  ) {
    this.ring = keyRingOf(config);
  }

  async receive(req: IncomingMessage, workspace: string, path: string): Promise<Accepted> {
    const notFound = () => {
      this.metrics.arrived('not_found', 'none');
      return StrataException.notFound(`No http-trigger at /http-trigger/${path}.`);
    };
    if (!isWorkspaceSlug(workspace)) throw notFound();
    if (!TRIGGER_PATH.test(path)) throw notFound();
    const body = await readRawBody(req, this.config.INBOUND_MAX_BODY_BYTES);
    // The URL's workspace, before any credential: the trigger found in it decides by its signature.
    const scope = issueWorkspaceScope(workspace);
    const resolution = await this.link.resolve(scope, path);
    if (!resolution.found) throw notFound();
    const trigger = resolution.trigger;

    const now = this.clock.now();
    const verdict = checkArrivalSignature({
      validate: trigger.validateSignature,
      secret: trigger.signingSecret === null ? null : this.openSecret(trigger.id, trigger.signingSecret),
      headerName: trigger.signatureHeaderName,
      headers: req.headers,
      body,
      nowSeconds: Math.floor(now.getTime() / 1000),
      toleranceSeconds: this.config.INBOUND_SIGNATURE_TOLERANCE_S,
    });
    if (verdict.result === 'rejected' && !trigger.captureRejected) {
      this.metrics.arrived('refused', 'rejected');
      throw new StrataException(ErrorCode.UNAUTHORIZED, `Invalid signature: ${verdict.reason ?? 'rejected'}`);
    }
    // A plan without inbound capture refuses arrivals (403 PLAN_RESTRICTED, docs/plans.md): nothing is stored.
    await this.plans.ensureFeature(scope, 'inboundCapture');

    const id = newInboundEventId();
    const given = req.headers['x-correlation-id'];
    const correlationId = typeof given === 'string' && CORRELATION_ID.test(given) ? given : randomUUID();
    const headers = headersOf(req.headers);
    const sealed = sealArrival(this.ring, id, body, headers);
    const rejected = verdict.result === 'rejected';
    const paused = trigger.paused && !rejected;
    const status: DispatchStatus = rejected || paused ? 'dropped_dispatch' : 'received';
    // A verified plain HMAC has no delivery id: its signature is claimed for the replay window instead.
    const claimKey = this.config.INBOUND_HMAC_REPLAY_WINDOW_S > 0 ? signatureClaimOf(verdict) : null;
    const claim =
      claimKey === null
        ? null
        : { key: claimKey, expiresAt: new Date(now.getTime() + this.config.INBOUND_HMAC_REPLAY_WINDOW_S * 1000) };
    const { stored, event } = await this.events.insert(
      scope,
      {
        id,
        triggerId: trigger.id,
        functionId: trigger.functionId,
        sourceName: trigger.name,
        signatureResult: verdict.result,
        signatureScheme: verdict.scheme ?? null,
        dispatchStatus: status,
        dispatchError: rejected
          ? `Signature rejected: ${verdict.reason ?? 'no reason'}; never dispatched.`
          : paused
            ? 'The trigger is paused.'
            : null,
        correlationId,
        replayedFrom: null,
        payload: sealed.payload,
        headers: sealed.headers,
        keyVersion: sealed.keyVersion,
        contentType: typeof req.headers['content-type'] === 'string' ? req.headers['content-type'] : null,
        bodyBytes: body.length,
        runId: null,
        jobId: randomUUID(),
        // Only verified arrivals are written as records (spec: auto-persist needs signature validation).
        persistStatus: trigger.autoPersist && verdict.result === 'verified' && !paused ? 'pending' : null,
        persistedRecordId: null,
        persistError: null,
        receivedAt: now,
        dispatchedAt: null,
        deliveryId: verdict.result === 'verified' ? deliveryIdOf(verdict.scheme, req.headers['webhook-id']) : null,
      },
      claim,
    );
    // The same delivery again (a provider's retry, signed anew), or the same plain HMAC request within the
    // replay window: answered as the first, and nothing runs twice.
    this.metrics.arrived(stored ? 'stored' : 'duplicate', verdict.result);
    if (!stored) return acceptedAs(event);
    if (rejected) {
      throw new StrataException(
        ErrorCode.UNAUTHORIZED,
        `Invalid signature: ${verdict.reason ?? 'rejected'} (kept as ${id})`,
      );
    }
    // The arrival as it came (what was just sealed), so the dispatch does not open it again.
    if (status === 'received') this.dispatcher.dispatchLater(scope, event, { body, headers });
    return acceptedAs(event);
  }

  /**
   * The trigger's signing secret: sealed by compute with the shared key ring,
   * bound to the trigger. Kept opened as long as the trigger's lookup is
   * (INBOUND_TRIGGER_CACHE_MS), keyed by the envelope, so a rotated secret is a
   * new entry.
   */
  private openSecret(triggerId: string, sealed: string): string | null {
    const key = `${triggerId}.${sealed}`;
    const now = performance.now();
    const kept = this.secrets.get(key);
    if (kept && kept.until > now) return kept.secret;
    let secret: string | null;
    try {
      const plain = JSON.parse(this.ring.unsealString(sealed, triggerSigningSecretBinding(triggerId))) as unknown;
      secret = typeof plain === 'string' ? plain : null;
    } catch {
      secret = null;
    }
    if (this.config.INBOUND_TRIGGER_CACHE_MS > 0) {
      if (this.secrets.size >= MAX_OPENED_SECRETS) this.secrets.delete(this.secrets.keys().next().value!);
      this.secrets.set(key, { secret, until: now + this.config.INBOUND_TRIGGER_CACHE_MS });
    }
    return secret;
  }
}

/** The 202 of a stored arrival. */
function acceptedAs(event: InboundEventEntity): Accepted {
  return {
    executionId: event.jobId!,
    inboundEventId: event.id,
    correlationId: event.correlationId,
    dispatchStatus: event.dispatchStatus,
  };
}
