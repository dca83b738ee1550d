/**
 * Every error the platform answers with has one of these codes. The mapping to
 * HTTP statuses is exhaustive: a new code does not compile until it has a status.
 */
export enum ErrorCode {
  VALIDATION_ERROR = 'VALIDATION_ERROR',
  INVALID_ID = 'INVALID_ID',
  UNAUTHORIZED = 'UNAUTHORIZED',
  PERMISSION_DENIED = 'PERMISSION_DENIED',
  WORKSPACE_MISMATCH = 'WORKSPACE_MISMATCH',
  PLAN_RESTRICTED = 'PLAN_RESTRICTED',
  NOT_FOUND = 'NOT_FOUND',
  RECORD_NOT_FOUND = 'RECORD_NOT_FOUND',
  STRUCTURE_NOT_FOUND = 'STRUCTURE_NOT_FOUND',
  METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED',
  CONFLICT = 'CONFLICT',
  DUPLICATE_KEY = 'DUPLICATE_KEY',
  VERSION_CONFLICT = 'VERSION_CONFLICT',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE = 'UNSUPPORTED_MEDIA_TYPE',
  /** A `Range` outside the file (storage downloads). */
  RANGE_NOT_SATISFIABLE = 'RANGE_NOT_SATISFIABLE',
  UNPROCESSABLE = 'UNPROCESSABLE',
  RATE_LIMITED = 'RATE_LIMITED',
  QUOTA_EXCEEDED = 'QUOTA_EXCEEDED',
  INTERNAL = 'INTERNAL',
  BAD_GATEWAY = 'BAD_GATEWAY',
  UNAVAILABLE = 'UNAVAILABLE',
  TIMEOUT = 'TIMEOUT',
}

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case ErrorCode.VALIDATION_ERROR:
    case ErrorCode.INVALID_ID:
      return 400;
    case ErrorCode.UNAUTHORIZED:
      return 401;
    case ErrorCode.PERMISSION_DENIED:
    case ErrorCode.WORKSPACE_MISMATCH:
    case ErrorCode.PLAN_RESTRICTED:
      return 403;
    case ErrorCode.NOT_FOUND:
    case ErrorCode.RECORD_NOT_FOUND:
    case ErrorCode.STRUCTURE_NOT_FOUND:
      return 404;
    case ErrorCode.METHOD_NOT_ALLOWED:
      return 405;
    case ErrorCode.CONFLICT:
    case ErrorCode.DUPLICATE_KEY:
    case ErrorCode.VERSION_CONFLICT:
      return 409;
    case ErrorCode.PAYLOAD_TOO_LARGE:
      return 413;
    case ErrorCode.UNSUPPORTED_MEDIA_TYPE:
      return 415;
    case ErrorCode.RANGE_NOT_SATISFIABLE:
      return 416;
    case ErrorCode.UNPROCESSABLE:
      return 422;
    case ErrorCode.RATE_LIMITED:
    case ErrorCode.QUOTA_EXCEEDED:
      return 429;
    case ErrorCode.INTERNAL:
      return 500;
    case ErrorCode.BAD_GATEWAY:
      return 502;
    case ErrorCode.UNAVAILABLE:
      return 503;
    case ErrorCode.TIMEOUT:
      return 504;
    default:
      return assertNever(code);
  }
}

function assertNever(value: never): never {
  throw new Error(`unmapped error code ${String(value)}`);
}

/** The code that stands for a bare HTTP status (used for errors raised by the framework). */
export function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return ErrorCode.VALIDATION_ERROR;
    case 401:
      return ErrorCode.UNAUTHORIZED;
    case 403:
      return ErrorCode.PERMISSION_DENIED;
    case 404:
      return ErrorCode.NOT_FOUND;
    case 405:
      return ErrorCode.METHOD_NOT_ALLOWED;
    case 409:
      return ErrorCode.CONFLICT;
    case 413:
      return ErrorCode.PAYLOAD_TOO_LARGE;
    case 415:
      return ErrorCode.UNSUPPORTED_MEDIA_TYPE;
    case 416:
      return ErrorCode.RANGE_NOT_SATISFIABLE;
    case 422:
      return ErrorCode.UNPROCESSABLE;
    case 429:
      return ErrorCode.RATE_LIMITED;
    case 502:
      return ErrorCode.BAD_GATEWAY;
    case 503:
      return ErrorCode.UNAVAILABLE;
    case 504:
      return ErrorCode.TIMEOUT;
    default:
      return status >= 400 && status < 500 ? ErrorCode.VALIDATION_ERROR : ErrorCode.INTERNAL;
  }
}

/** One entry per offending field. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** The four error body shapes of the specification; each API area uses one. */
export type ErrorShape = 'general' | 'functions' | 'records' | 'orchestration';

export interface GeneralErrorBody {
  error: string;
  message: string;
  details?: FieldError[];
  code?: string;
  requestId?: string;
}

export interface FunctionsErrorBody {
  error: string;
  statusCode: number;
  /** One entry per offending field, on validation errors (beyond the spec's two fields). */
  details?: FieldError[];
}

export interface RecordsErrorBody {
  error: { code: string; message: string; details?: unknown };
}

export interface OrchestrationErrorBody {
  error: string;
  message: string;
  details?: FieldError[];
}

export type ErrorBody = GeneralErrorBody | FunctionsErrorBody | RecordsErrorBody | OrchestrationErrorBody;
