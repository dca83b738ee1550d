import type { WorkspaceScope } from '@strata/db';
import type { JsonValue } from '@strata/sandbox';
import { isAllowedHost } from '../../allowed-domains/domain-pattern.js';
import type { AllowedDomainsRepository } from '../../allowed-domains/allowed-domains.repository.js';
import type { HttpEgress } from './http-egress.js';
import { ApiRefusal, optionalObjectArg, stringArg, type ApiHandler } from './handler.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * `{name: value}` headers of strings, or a refusal. `Host` is the URL's: a host
 * named only in a header would reach a virtual host the allowed-domains list
 * never saw, behind an address that is on it.
 */
function headersOf(value: JsonValue | undefined): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiRefusal('headers must be an object of strings');
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new ApiRefusal(`header ${name} must be a string`);
    if (name.toLowerCase() === 'host') {
      throw new ApiRefusal(
        "the Host header is the URL's host: put the host in the URL (it must be on the allowed domains)",
      );
    }
    out[name] = v;
  }
  return out;
}

/**
 * `api.fetch(url, {method, headers, body})` and `api.httpPost(url, body, headers?)`:
 * only to hosts on the workspace's allowed-domains list, through the egress
 * guard. A body that is not a string is sent as JSON. Answers `{status, ok,
 * headers, body, json}` (`body` the response text, `json` its parse when it is
 * JSON, else null); a 4xx or 5xx answer is an answer, not an error.
 */
export function httpHandlers(
  egress: HttpEgress,
  domains: AllowedDomainsRepository,
  scope: WorkspaceScope,
): Record<string, ApiHandler> {
  let allowed: Promise<string[]> | undefined;
  const send = async (
    method: string,
    target: string,
    headers: Record<string, string>,
    body: JsonValue | undefined,
    signal: AbortSignal,
  ): Promise<JsonValue> => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new ApiRefusal('url must be an absolute http or https URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ApiRefusal('url must be an absolute http or https URL');
    if (url.username || url.password)
      throw new ApiRefusal('credentials in the URL are not sent: use an Authorization header');
    allowed ??= domains.list(scope).then((rows) => rows.map((r) => r.domain));
    if (!isAllowedHost(url.hostname, await allowed)) {
      throw new ApiRefusal(
        `${url.hostname} is not on the workspace's allowed domains (compute-functions/allowed-domains)`,
      );
    }
    const json = body !== undefined && typeof body !== 'string';
    const payload = body === undefined ? undefined : Buffer.from(json ? JSON.stringify(body) : body, 'utf8');
    const lowered = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
    const res = await egress.exchange(
      url,
      {
        method,
        headers: {
          ...(json && !lowered.has('content-type') ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(payload ? { body: payload } : {}),
      },
      signal,
    );
    const text = res.body.toString('utf8');
    let parsed: JsonValue = null;
    if (/\bjson\b/i.test(res.headers['content-type'] ?? '')) {
      try {
        parsed = JSON.parse(text) as JsonValue;
      } catch {
        parsed = null;
      }
    }
    return {
      status: res.status,
      ok: res.status >= 200 && res.status < 300,
      headers: res.headers,
      body: text,
      json: parsed,
    };
  };

  return {
    fetch: async (args, { signal }) => {
      const options = optionalObjectArg(args, 1, 'options');
      const given = options['method'];
      if (given !== undefined && given !== null && typeof given !== 'string') {
        throw new ApiRefusal(`method must be a string, one of ${[...METHODS].join(', ')}`);
      }
      const method = typeof given === 'string' ? given.toUpperCase() : 'GET';
      if (!METHODS.has(method)) throw new ApiRefusal(`method must be one of ${[...METHODS].join(', ')}`);
      if ((method === 'GET' || method === 'HEAD') && options['body'] !== undefined) {
        throw new ApiRefusal(`a ${method} request has no body`);
      }
      return send(method, stringArg(args, 0, 'url'), headersOf(options['headers']), options['body'], signal);
    },
    httpPost: async (args, { signal }) =>
      // No body given, none sent; an explicit null is the JSON null.
      send('POST', stringArg(args, 0, 'url'), headersOf(args[2]), args[1], signal),
  };
}
