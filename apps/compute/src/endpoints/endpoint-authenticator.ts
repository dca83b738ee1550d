import { Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { BearerAuthorizer, Clock, StrataException } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { EndpointAuthMode } from '../triggers/metadata/index.js';
import type { TriggerEntity } from '../triggers/trigger.entity.js';
import { authModesOf } from './endpoint-auth-modes.js';
import { apiKeyMatches } from './endpoint-credentials.js';
import { EndpointCredentials } from './endpoint-credentials.service.js';
import { EndpointSignatureReplays } from './endpoint-signature-replays.js';
import { TriggerLookups } from '../triggers/trigger-lookups.js';
import { SIGNATURE_HEADER, SIGNATURE_TIMESTAMP_HEADER, verifyEndpointSignature } from './endpoint-signature.js';

export const API_KEY_HEADER = 'x-api-key';

/** Who called, as the run records it (`createdBy`) and the function sees it (`context.req.auth`). */
export interface EndpointCaller {
  readonly mode: EndpointAuthMode;
  readonly principalType?: string;
  readonly principalId?: string;
  /** The run's createdBy: the principal's id, or the mode for key, signature and public calls. */
  readonly by: string;
}

/** The parts of a call its credential is checked against. */
export interface EndpointCall {
  readonly req: IncomingMessage & { readonly method: string };
  readonly res: ServerResponse;
  readonly scope: WorkspaceScope;
  readonly trigger: TriggerEntity;
  /** `/endpoints/{path}` and the raw query: what an hmac signature covers. */
  readonly target: string;
  readonly body: Buffer;
}

/**
 * Checks a call against its endpoint's auth modes: any one listed mode whose
 * credential the call presents and that holds lets it in. A bearer token needs
 * `function-triggers:execute` in the workspace (403 without it); a wrong or
 * missing credential is a 401 that names the modes the endpoint accepts.
 */
@Injectable()
export class EndpointAuthenticator {
  constructor(
    private readonly bearer: BearerAuthorizer,
    private readonly credentials: EndpointCredentials,
    private readonly lookups: TriggerLookups,
    private readonly replays: EndpointSignatureReplays,
    private readonly clock: Clock,
    private readonly config: ComputeConfig,
  ) {}

  async authenticate(call: EndpointCall): Promise<EndpointCaller> {
    const modes = authModesOf(call.trigger.metadata);
    if (modes.includes('public')) return { mode: 'public', by: 'endpoint:public' };
    const { req } = call;
    const failures: StrataException[] = [];
    let stored: { apiKeyHash: string | null; signingSecret: string | null } | undefined;
    // Kept like the endpoint's lookup, and dropped with it on any change of the workspace's triggers (a rotation too).
    const credentials = async () =>
      (stored ??= await this.lookups.keep(
        call.scope,
        `credentials/${call.trigger.id}`,
        () => this.credentials.forCheck(call.scope, call.trigger.id),
        () => true,
      ));

    if (modes.includes('bearer') && BearerAuthorizer.presented(req)) {
      try {
        const principal = await this.bearer.authorize(
          req,
          call.res,
          call.scope.workspace,
          'function-triggers',
          'execute',
        );
        return { mode: 'bearer', principalType: principal.type, principalId: principal.id, by: principal.id };
      } catch (err) {
        if (!(err instanceof StrataException)) throw err;
        failures.push(err);
      }
    }
    const key = header(req, API_KEY_HEADER);
    if (modes.includes('apiKey') && key !== undefined) {
      const { apiKeyHash } = await credentials();
      if (apiKeyHash !== null && apiKeyMatches(key, apiKeyHash)) return { mode: 'apiKey', by: 'endpoint:apiKey' };
      failures.push(StrataException.unauthorized('Invalid API key'));
    }
    const signature = header(req, SIGNATURE_HEADER);
    if (modes.includes('hmac') && signature !== undefined) {
      const { signingSecret } = await credentials();
      const verdict =
        signingSecret === null
          ? ({ ok: false, reason: 'the endpoint has no signing secret' } as const)
          : verifyEndpointSignature({
              secret: signingSecret,
              signature,
              timestamp: header(req, SIGNATURE_TIMESTAMP_HEADER),
              method: req.method,
              target: call.target,
              body: call.body,
              now: this.clock.now(),
              toleranceSeconds: this.config.COMPUTE_ENDPOINT_SIGNATURE_TOLERANCE_S,
            });
      if (verdict.ok && (await this.replays.firstUse(call.trigger.id, verdict.mac))) {
        return { mode: 'hmac', by: 'endpoint:hmac' };
      }
      const reason = verdict.ok ? 'it was used before (a replayed call)' : verdict.reason;
      failures.push(StrataException.unauthorized(`Invalid signature: ${reason}`));
    }
    // A valid token that lacks the permission outranks a wrong other credential: say what is missing.
    const forbidden = failures.find((f) => f.code !== ErrorCode.UNAUTHORIZED);
    if (forbidden) throw forbidden;
    const [only] = failures;
    if (failures.length === 1 && only) throw withChallenge(only, modes);
    throw withChallenge(StrataException.unauthorized(`This endpoint needs ${describeModes(modes)}`), modes);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const MODE_CREDENTIALS: Record<EndpointAuthMode, string> = {
  bearer: 'Authorization: Bearer <token>',
  apiKey: `${API_KEY_HEADER}: <key>`,
  hmac: `${SIGNATURE_HEADER} and ${SIGNATURE_TIMESTAMP_HEADER}`,
  public: 'nothing',
};

function describeModes(modes: EndpointAuthMode[]): string {
  return modes.map((m) => MODE_CREDENTIALS[m]).join(', or ');
}

/** A 401 that challenges for a bearer token only when one is a way in. */
function withChallenge(err: StrataException, modes: EndpointAuthMode[]): StrataException {
  if (err.code !== ErrorCode.UNAUTHORIZED) return err;
  return new StrataException(
    err.code,
    err.message,
    err.details,
    modes.includes('bearer') ? { 'WWW-Authenticate': 'Bearer' } : {},
  );
}
