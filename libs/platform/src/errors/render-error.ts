import { STATUS_CODES } from 'node:http';
import type { ErrorBody, ErrorShape, FieldError } from '@strata/contracts';

export interface RenderableError {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly details?: FieldError[] | Record<string, unknown> | undefined;
  readonly requestId?: string | undefined;
}

/** Orchestration API error names by status. */
function orchestrationName(status: number): string {
  switch (status) {
    case 400:
      return 'validation_error';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 422:
      return 'unprocessable';
    case 429:
      return 'rate_limited';
    default:
      return status >= 500 ? 'internal_error' : 'bad_request';
  }
}

/**
 * The records API's code for an error: its 429 is `QUOTA_EXCEEDED`, the one name spec 3 gives a
 * record error of that status ("Named record error codes"); the other areas keep `RATE_LIMITED`.
 */
function recordsCode(code: string): string {
  return code === 'RATE_LIMITED' ? 'QUOTA_EXCEEDED' : code;
}

/** Field messages as one text: sentences side by side (`… required. …`), others with `; `. */
function joinMessages(messages: string[]): string {
  return messages.reduce(
    (text, message) => (text ? `${text}${/[.!?]$/.test(text) ? ' ' : '; '}${message}` : message),
    '',
  );
}

/**
 * The status an error answers in an API area. A plan's quota (`QUOTA_EXCEEDED`)
 * is the records API's 429 (spec 3, "Named record error codes") and every other
 * area's 403 ("plan or quota restriction"; docs/plans.md).
 */
export function statusInShape(shape: ErrorShape, e: Pick<RenderableError, 'status' | 'code'>): number {
  return e.code === 'QUOTA_EXCEEDED' && shape !== 'records' ? 403 : e.status;
}

/**
 * The `details` list of a plan refusal outside the records API: its details
 * object as the one entry, named by the resource or feature (docs/plans.md).
 */
function planEntry(e: RenderableError): FieldError[] | undefined {
  if (e.code !== 'QUOTA_EXCEEDED' && e.code !== 'PLAN_RESTRICTED') return undefined;
  const d = e.details;
  if (d === undefined || Array.isArray(d)) return undefined;
  const field =
    typeof d['resource'] === 'string' ? d['resource'] : typeof d['feature'] === 'string' ? d['feature'] : undefined;
  return field === undefined ? undefined : [{ field, message: e.message, ...d }];
}

/** Renders an error in one of the specification's four body shapes. Pure. */
export function renderError(shape: ErrorShape, e: RenderableError): ErrorBody {
  const fieldList = Array.isArray(e.details) ? e.details : planEntry(e);
  switch (shape) {
    case 'general':
      return {
        error: STATUS_CODES[e.status] ?? 'Error',
        message: e.message,
        ...(fieldList ? { details: fieldList } : {}),
        code: e.code,
        ...(e.requestId ? { requestId: e.requestId } : {}),
      };
    case 'functions':
      // The message of each offending field (one alone reads exactly as the spec's messages), and the list.
      if (!fieldList?.length) return { error: e.message, statusCode: e.status };
      return {
        error: e.code === 'VALIDATION_ERROR' ? joinMessages(fieldList.map((d) => d.message)) : e.message,
        statusCode: e.status,
        details: fieldList,
      };
    case 'records':
      return {
        error: { code: recordsCode(e.code), message: e.message, ...(e.details ? { details: e.details } : {}) },
      };
    case 'orchestration':
      return { error: orchestrationName(e.status), message: e.message, ...(fieldList ? { details: fieldList } : {}) };
    default: {
      const never: never = shape;
      throw new Error(`unknown error shape ${String(never)}`);
    }
  }
}
