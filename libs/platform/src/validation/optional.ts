import { ValidateIf, type ValidationOptions } from 'class-validator';

/**
 * The field may be left out. Unlike class-validator's `IsOptional`, `null` is
 * not "left out": it is validated like any other value, so `{"description":
 * null}` is a 400 naming the field instead of a null reaching a NOT NULL column.
 * Use this one in every DTO (ESLint refuses class-validator's).
 */
export function IsOptional(options?: ValidationOptions): PropertyDecorator {
  return ValidateIf((_object: unknown, value: unknown) => value !== undefined, options);
}

/**
 * The field may be left out or be `null`, where `null` has a documented meaning
 * (such as "clear it"); the service must handle that null itself. Only for the
 * fields whose contract says so.
 */
export function IsNullable(options?: ValidationOptions): PropertyDecorator {
  return ValidateIf((_object: unknown, value: unknown) => value !== undefined && value !== null, options);
}
