import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import type { JsonValue } from '@strata/sandbox';
import { ComputeConfig } from '../../compute.config.js';
import { FunctionPrincipalTokens } from '../function-principal-tokens.js';
import { ApiRefusal } from './handler.js';

/** A refusal of the data service, as a function sees it: the status and the service's own message. */
export class DataApiError extends ApiRefusal {
  override readonly name = 'DataApiError';

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The message of an error body in any of the platform's shapes. */
function messageOf(body: unknown, status: number): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as Record<string, unknown>;
    const nested = b['error'];
    // The records shape nests {message, details} under `error`; the general shape has them at the top.
    const source = typeof nested === 'object' && nested !== null ? (nested as Record<string, unknown>) : b;
    const message =
      typeof source['message'] === 'string' ? source['message'] : typeof nested === 'string' ? nested : undefined;
    if (message !== undefined) return withDetails(message, source['details']);
  }
  return `the data service answered ${status}`;
}

/** Most characters of the data service's reasons a function is told (its own limit on error messages applies too). */
const MAX_DETAILS_CHARS = 2000;

/** `Validation failed (filter: expected ":" …; sort[0].field: …)`: the reasons the data service gave, by field. */
function withDetails(message: string, details: unknown): string {
  if (!Array.isArray(details) || details.length === 0) return message;
  const reasons = details
    .map((d: unknown) => {
      if (typeof d !== 'object' || d === null) return undefined;
      const { field, message: reason } = d as { field?: unknown; message?: unknown };
      if (typeof reason !== 'string') return undefined;
      // Some reasons name their field already (`filter: expected ":" …`).
      const named = typeof field === 'string' && field !== '' && !reason.startsWith(`${field}:`);
      return named ? `${field}: ${reason}` : reason;
    })
    .filter((r): r is string => r !== undefined)
    .join('; ');
  if (!reasons) return message;
  const text = reasons.length > MAX_DETAILS_CHARS ? `${reasons.slice(0, MAX_DETAILS_CHARS)}…` : reasons;
  return `${message} (${text})`;
}

/**
 * The data service's HTTP API, called as the workspace's function principal:
 * every call goes through the data service's own checks (token, workspace,
 * permissions, validation, events), never around them. The workspace in the
 * URL is the run's own; path segments from user code are encoded.
 */
@Injectable()
export class DataApi {
  constructor(
    private readonly config: ComputeConfig,
    private readonly tokens: FunctionPrincipalTokens,
  ) {}

  async request(
    scope: WorkspaceScope,
    method: 'GET' | 'POST' | 'PATCH',
    path: readonly string[],
    options: { body?: JsonValue; query?: Record<string, string>; signal: AbortSignal },
  ): Promise<{ status: number; body: JsonValue }> {
    const url = new URL(
      `${this.config.DATA_SERVICE_URL.replace(/\/$/, '')}/data/workspace/${encodeURIComponent(scope.workspace)}/api/v1/${path
        .map(encodeURIComponent)
        .join('/')}`,
    );
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    for (let attempt = 0; ; attempt++) {
      const token = await this.tokens.tokenFor(scope);
      const res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal: AbortSignal.any([options.signal, AbortSignal.timeout(this.config.COMPUTE_API_TIMEOUT_MS)]),
      });
      const text = await res.text();
      let body: JsonValue;
      try {
        body = text ? (JSON.parse(text) as JsonValue) : null;
      } catch {
        body = text;
      }
      // A token the data service no longer takes (revoked, rekeyed): one fresh token, once.
      if (res.status === 401 && attempt === 0) {
        this.tokens.forget(scope);
        continue;
      }
      return { status: res.status, body };
    }
  }

  /** `request`, refusing any answer but 2xx with the service's message. */
  async call(
    scope: WorkspaceScope,
    method: 'GET' | 'POST' | 'PATCH',
    path: readonly string[],
    options: { body?: JsonValue; query?: Record<string, string>; signal: AbortSignal },
  ): Promise<JsonValue> {
    const { status, body } = await this.request(scope, method, path, options);
    if (status < 200 || status > 299) throw new DataApiError(status, `${status}: ${messageOf(body, status)}`);
    return body;
  }

  /** `call`, with null for a 404. */
  async callOrNull(
    scope: WorkspaceScope,
    path: readonly string[],
    options: { query?: Record<string, string>; signal: AbortSignal },
  ): Promise<JsonValue> {
    const { status, body } = await this.request(scope, 'GET', path, options);
    if (status === 404) return null;
    if (status < 200 || status > 299) throw new DataApiError(status, `${status}: ${messageOf(body, status)}`);
    return body;
  }
}
