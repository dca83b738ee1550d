/** One bad field of a validation failure. */
export interface ErrorDetail {
  readonly field: string;
  readonly message: string;
}

/**
 * Any answer of 400 or more, whichever of the spec's four error shapes it came in
 * (general `{error, message, details?, code?, requestId?}`, functions `{error, statusCode}`,
 * records `{error: {code, message, details?}}`, orchestration `{error, message, details?}`).
 */
export class StrataApiError extends Error {
  override readonly name = 'StrataApiError';

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The machine-readable code when the answer has one (`RECORD_NOT_FOUND`, `validation_error`, `VALIDATION_ERROR`…). */
    readonly code: string | undefined,
    message: string,
    /** One entry per bad field when the answer lists them; a records error's `details` object otherwise. */
    readonly details: readonly ErrorDetail[] | Readonly<Record<string, unknown>> | undefined,
    /** The request id the platform logged this request under, when it answered one. */
    readonly requestId: string | undefined,
    /** The answer's body as it came (parsed JSON, or text). */
    readonly body: unknown,
    /** `Retry-After` in seconds, on a 429 or 503 that carried one. */
    readonly retryAfterSeconds: number | undefined,
    readonly method: string,
    readonly url: string,
  ) {
    super(message);
  }

  /** The `details` entries naming fields (empty when the answer has none). */
  get fieldErrors(): readonly ErrorDetail[] {
    return Array.isArray(this.details) ? (this.details as readonly ErrorDetail[]) : [];
  }
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Reads an error answer into a StrataApiError, whatever its shape. */
export function toApiError(
  request: { method: string; url: string },
  response: { status: number; statusText: string; headers: Headers },
  body: unknown,
): StrataApiError {
  let code: string | undefined;
  let message: string | undefined;
  let details: StrataApiError['details'];
  let requestId = response.headers.get('x-request-id') ?? undefined;
  if (isObject(body)) {
    if (isObject(body.error)) {
      // records API: {error: {code, message, details?}}
      code = text(body.error.code);
      message = text(body.error.message);
      details = readDetails(body.error.details);
    } else {
      // general and orchestration APIs: `error` names the failure beside a `message`;
      // the functions API's `{error, statusCode}`: `error` is the message
      message = text(body.message);
      code = text(body.code) ?? (message === undefined ? undefined : text(body.error));
      message ??= text(body.error);
      details = readDetails(body.details);
    }
    requestId = text(body.requestId) ?? requestId;
  } else if (typeof body === 'string' && body.length > 0 && body.length <= 1000) {
    message = body;
  }
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  return new StrataApiError(
    response.status,
    code,
    message ?? `${response.status} ${response.statusText}`.trim(),
    details,
    requestId,
    body,
    Number.isFinite(retryAfter) ? retryAfter : undefined,
    request.method,
    request.url,
  );
}

function readDetails(value: unknown): StrataApiError['details'] {
  if (Array.isArray(value)) {
    return value
      .filter(isObject)
      .map((entry) => ({ field: text(entry.field) ?? '', message: text(entry.message) ?? '' }));
  }
  return isObject(value) ? value : undefined;
}
