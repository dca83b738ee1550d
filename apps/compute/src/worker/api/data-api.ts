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
    if (
      typeof nested === 'object' &&
      nested !== null &&
      typeof (nested as { message?: unknown }).message === 'string'
    ) {
      return (nested as { message: string }).message;
    }
    if (typeof b['message'] === 'string') return b['message'];
    if (typeof nested === 'string') return nested;
  }
  return `the data service answered ${status}`;
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
