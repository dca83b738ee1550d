import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import type { FieldError } from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';
import { droppedKeyErrors } from './dropped-keys.js';
import { copyJson, restoreFreeForm } from './free-form.js';

/** class-validator's checks of a value's type: when one fails, the others say nothing useful. */
const TYPE_CONSTRAINTS: ReadonlySet<string> = new Set([
  'isString',
  'isNumber',
  'isInt',
  'isBoolean',
  'isArray',
  'isObject',
]);

/**
 * The messages of one field's failed constraints. A value of the wrong type
 * is told only that (`domain must be a string`, not also `domain must be at
 * most 255 characters`, which a number cannot be measured against).
 */
function messagesOf(constraints: Record<string, string>): string {
  const failed = Object.entries(constraints);
  const typed = failed.filter(([name]) => TYPE_CONSTRAINTS.has(name));
  return (typed.length > 0 ? typed : failed).map(([, message]) => message).join('; ');
}

/**
 * Flattens class-validator errors into one entry per offending field, with a
 * path that points at it (`properties[2].maxLength`).
 */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const path = joinPath(parent, error.property);
    if (error.constraints) {
      out.push({ field: path, message: messagesOf(error.constraints) });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, path));
  }
  return out;
}

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/** The one problem of a body that is not a JSON object where a DTO is expected. */
export const BODY_NOT_OBJECT: FieldError = { field: 'body', message: 'The request body must be a JSON object.' };

/** Validates and transforms as Nest's pipe does, then puts back each free-form body value as it arrived. */
class StrataValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // An array where a DTO is expected: told so, not one "property 0 should not exist" per element.
    if (metadata.type === 'body' && Array.isArray(value) && metadata.metatype && this.toValidate(metadata)) {
      throw StrataException.validation([BODY_NOT_OBJECT]);
    }
    const original = metadata.type === 'body' ? copyJson(value) : undefined;
    // Keys such as `__proto__` and `toString` never reach the unknown-field check (dropped-keys.ts).
    const dropped =
      original !== undefined && metadata.metatype && this.toValidate(metadata)
        ? droppedKeyErrors(metadata.metatype as new () => object, original)
        : [];
    let result: unknown;
    try {
      result = await super.transform(value, metadata);
    } catch (err) {
      if (dropped.length > 0 && err instanceof StrataException && Array.isArray(err.details)) {
        const named = new Set(err.details.map((d) => d.field));
        throw StrataException.validation([...err.details, ...dropped.filter((d) => !named.has(d.field))], err.message);
      }
      throw err;
    }
    if (dropped.length > 0) throw StrataException.validation(dropped);
    if (original !== undefined) restoreFreeForm(result, original);
    return result;
  }

  /**
   * Path parameters reach their own pipes as the text they were: `IntegerIdPipe`
   * converts a number and names what it was given (`Invalid id 'abc'`, not `'NaN'`).
   */
  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'param' ? value : super.transformPrimitive(value, metadata);
  }
}

/**
 * The one validation pipe: strips nothing silently, refuses unknown fields,
 * converts types declared by DTOs, and keeps every key of free-form values
 * (free-form.ts).
 */
export function createValidationPipe(): ValidationPipe {
  return new StrataValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => StrataException.validation(flattenValidationErrors(errors)),
  });
}

/**
 * Checks `raw` against a DTO as the validation pipe would, answering the
 * problems instead of throwing them: for a body whose other parts (a workflow's
 * steps, say) are checked by the service, so that every problem is reported
 * at once. `value` is the transformed DTO when there are none.
 */
export async function checkBody<T extends object>(
  metatype: new () => T,
  raw: unknown,
): Promise<{ value: T; errors: [] } | { value: undefined; errors: FieldError[] }> {
  try {
    // A copy: Nest's pipe deletes `__proto__` and `constructor` keys in place, and the caller goes on reading `raw`.
    const value = (await createValidationPipe().transform(copyJson(raw), { type: 'body', metatype })) as T;
    return { value, errors: [] };
  } catch (err) {
    if (err instanceof StrataException && Array.isArray(err.details)) {
      return { value: undefined, errors: err.details };
    }
    throw err;
  }
}
