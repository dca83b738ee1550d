import { isUtf8 } from 'node:buffer';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ErrorCode, isWorkspaceSlug } from '@strata/contracts';
import {
  checkArrivalSignature,
  deliveryIdOf,
  signatureClaimOf,
  type ArrivalVerdict,
  type KeyRing,
} from '@strata/crypto';
import { issueWorkspaceScope } from '@strata/db';
import {
  assertJsonBody,
  Clock,
  decodeContentEncoding,
  findJsonProblems,
  keyRingOf,
  readRawBody,
  StrataException,
} from '@strata/platform';
import type { JsonValue } from '@strata/workflow';
import { OrchestrationConfig } from '../orchestration.config.js';
import type { SealedSecret } from '../orchestrations/orchestration-trigger.js';
import type { OrchestrationEntity } from '../orchestrations/orchestration.entity.js';
import { OrchestrationsRepository } from '../orchestrations/orchestrations.repository.js';
import { secretBinding } from '../orchestrations/orchestration-names.js';
import { RunsService } from '../runs/runs.service.js';

const MAX_BODY_BYTES = 1024 * 1024;
const CORRELATION_ID = /^[\x21-\x7e]{1,200}$/;

/**
 * The two webhook entry points of orchestrations: no bearer token; an
 * orchestration whose http-trigger validates signatures checks them as inbound
 * capture does (Standard Webhooks, or plain HMAC-SHA256 in its header), and an
 * active one starts a run with the JSON body as its input. A verified Standard
 * Webhooks delivery starts one run: its `webhook-id` seen again (a provider's
 * retry, or the same request sent twice) is answered with the first run. A verified
 * plain HMAC request has no id: its signature (the verified MAC's SHA-256) is claimed
 * for ORCHESTRATION_HMAC_REPLAY_WINDOW_S, and the same signature within it (the request
 * replayed, however the header spells it) is answered with the first run.
 */
@Injectable()
export class WebhookRuns {
  private readonly ring: KeyRing;

  constructor(
    private readonly orchestrations: OrchestrationsRepository,
    private readonly runs: RunsService,
    private readonly clock: Clock,
    private readonly config: OrchestrationConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  async receive(req: Request, workspace: string, by: { id: string } | { path: string }) {
    const notFound = () => StrataException.notFound('Orchestration not found');
    if (!isWorkspaceSlug(workspace)) throw notFound();
    // The URL's workspace, before any credential: the orchestration found in it decides by its signature.
    const scope = issueWorkspaceScope(workspace);
    const orchestration =
      'id' in by
        ? await this.orchestrations.find(scope, by.id)
        : await this.orchestrations.byWebhookPath(scope, by.path);
    if (!orchestration || orchestration.trigger.type !== 'http-trigger') throw notFound();
    assertJsonBody(req);
    const body = await readRawBody(req, MAX_BODY_BYTES);
    // The signature covers the body as sent; the run's input is the body decoded.
    const verdict = this.checkSignature(orchestration, req, body);
    const input = inputOf(decodeContentEncoding(req, body, MAX_BODY_BYTES));
    const { eventId, eventExpiresAt } = this.claimOf(verdict, req);
    // A delivery that started a run already is answered with it, whatever became of the orchestration
    // since (a provider retrying a delivery whose answer it lost must not be told it failed).
    const earlier = eventId === undefined ? undefined : await this.runs.runOfEvent(scope, eventId, orchestration.id);
    if (earlier) return { runId: earlier.id, status: earlier.status };
    if (orchestration.status !== 'active') {
      throw StrataException.conflict(
        `Orchestration is ${orchestration.status}: only an active one starts runs from its trigger`,
      );
    }
    const given = req.headers['x-correlation-id'];
    const start = {
      input,
      correlationId: typeof given === 'string' && CORRELATION_ID.test(given) ? given : null,
      triggerType: 'http-trigger',
      triggerMetadata: { webhookPath: orchestration.trigger.path ?? null },
    };
    if (eventId === undefined) {
      const run = await this.runs.create(scope, orchestration, start);
      return { runId: run.id, status: run.status };
    }
    const run = await this.runs.create(scope, orchestration, {
      ...start,
      eventId,
      ...(eventExpiresAt ? { eventExpiresAt } : {}),
    });
    if (run) return { runId: run.id, status: run.status };
    // A copy sent at the same moment started it: that run is the answer, and nothing runs again.
    const first = await this.runs.runOfEvent(scope, eventId, orchestration.id);
    // None: the orchestration was deleted as the delivery came (no run written, no claim kept).
    if (!first) throw notFound();
    return { runId: first.id, status: first.status };
  }

  /**
   * What a verified request claims in event_runs, so that it starts one run: a Standard
   * Webhooks delivery its `webhook-id` (for as long as its run is kept), a plain HMAC
   * request its signature (until the replay window ends). Nothing for an unsigned request.
   */
  private claimOf(
    verdict: ArrivalVerdict | undefined,
    req: Request,
  ): { eventId: string | undefined; eventExpiresAt: Date | undefined } {
    if (verdict?.result !== 'verified') return { eventId: undefined, eventExpiresAt: undefined };
    const deliveryId = deliveryIdOf(verdict.scheme, req.headers['webhook-id']);
    if (deliveryId !== null) return { eventId: `webhook:${deliveryId}`, eventExpiresAt: undefined };
    const windowS = this.config.ORCHESTRATION_HMAC_REPLAY_WINDOW_S;
    const signature = windowS > 0 ? signatureClaimOf(verdict) : null;
    if (signature === null) return { eventId: undefined, eventExpiresAt: undefined };
    return { eventId: signature, eventExpiresAt: new Date(this.clock.now().getTime() + windowS * 1000) };
  }

  /** The verdict on the request's signature; undefined when the trigger does not validate signatures. */
  private checkSignature(orchestration: OrchestrationEntity, req: Request, body: Buffer): ArrivalVerdict | undefined {
    const trigger = orchestration.trigger;
    if (trigger.validateSignature !== true) return undefined;
    const sealed = trigger.signingSecret as SealedSecret | undefined;
    let secret: string | null;
    try {
      secret = sealed ? this.ring.unsealString(sealed.value, secretBinding(orchestration.id)) : null;
    } catch {
      // A secret that does not open verifies nothing: the call is refused as unsigned.
      secret = null;
    }
    const verdict = checkArrivalSignature({
      validate: true,
      secret,
      headerName: trigger.signatureHeaderName ?? 'x-signature',
      headers: req.headers,
      body,
      nowSeconds: Math.floor(this.clock.now().getTime() / 1000),
      toleranceSeconds: 300,
    });
    if (verdict.result !== 'verified') {
      throw new StrataException(ErrorCode.UNAUTHORIZED, `Invalid signature: ${verdict.reason ?? 'rejected'}`);
    }
    return verdict;
  }
}

/**
 * The run's input: a JSON object body, or {} without a body. Refused as every API
 * refuses bad JSON (invalid UTF-8, too deep, NUL or lone surrogates, which jsonb
 * cannot hold), before it is parsed.
 */
function inputOf(body: Buffer): JsonValue {
  if (body.length === 0) return {};
  if (!isUtf8(body)) throw StrataException.validation([{ field: 'body', message: 'is not valid UTF-8' }]);
  const problems = findJsonProblems(body);
  if (problems.length > 0) throw StrataException.validation(problems, 'Invalid JSON body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw StrataException.validation([{ field: 'body', message: 'must be a JSON object' }]);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw StrataException.validation([{ field: 'body', message: 'must be a JSON object' }]);
  }
  return parsed as JsonValue;
}
