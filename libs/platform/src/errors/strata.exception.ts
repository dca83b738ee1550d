import { ErrorCode, statusOf, type FieldError } from '@strata/contracts';

/**
 * A domain error: a code from the contract's enum, a message for the caller,
 * and optional per-field details. The error filter renders it in the shape of
 * the API area that raised it.
 */
export class StrataException extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldError[] | Record<string, unknown>,
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = 'StrataException';
    this.status = statusOf(code);
  }

  static validation(details: FieldError[], message = 'Validation failed'): StrataException {
    return new StrataException(ErrorCode.VALIDATION_ERROR, message, details);
  }

  /** A 400 about one field whose message is the reason itself (the functions shape answers it as its error). */
  static invalid(field: string, message: string): StrataException {
    return StrataException.validation([{ field, message }], message);
  }

  static notFound(message: string, code: ErrorCode = ErrorCode.NOT_FOUND): StrataException {
    return new StrataException(code, message);
  }

  static conflict(message: string, code: ErrorCode = ErrorCode.CONFLICT): StrataException {
    return new StrataException(code, message);
  }

  static unprocessable(message: string, details?: FieldError[]): StrataException {
    return new StrataException(ErrorCode.UNPROCESSABLE, message, details);
  }

  static unauthorized(message = 'Missing, invalid or expired token'): StrataException {
    return new StrataException(ErrorCode.UNAUTHORIZED, message, undefined, { 'WWW-Authenticate': 'Bearer' });
  }

  static forbidden(message: string, code: ErrorCode = ErrorCode.PERMISSION_DENIED): StrataException {
    return new StrataException(code, message);
  }
}
