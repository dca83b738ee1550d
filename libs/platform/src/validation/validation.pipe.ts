import { ValidationPipe, type ValidationError } from '@nestjs/common';
import type { FieldError } from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';

/**
 * Flattens class-validator errors into one entry per offending field, with a
 * path that points at it (`properties[2].maxLength`).
 */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const path = joinPath(parent, error.property);
    if (error.constraints) {
      out.push({ field: path, message: Object.values(error.constraints).join('; ') });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, path));
  }
  return out;
}

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/** The one validation pipe: strips nothing silently, refuses unknown fields, converts types declared by DTOs. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => StrataException.validation(flattenValidationErrors(errors)),
  });
}
