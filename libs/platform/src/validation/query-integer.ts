import { Transform } from 'class-transformer';

const DECIMAL_INTEGER = /^[+-]?\d+$/;

/**
 * Reads an integer query parameter from its text: decimal digits only (with an
 * optional sign), so that `0x10`, `1e2`, ` 5` or an empty value are not taken
 * for numbers as `Number()` would take them; they stay what they were, and the
 * integer check after refuses them with the parameter's own message. A value
 * that is not a string (a repeated parameter's array) is left as it came.
 */
export function IntegerText(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && DECIMAL_INTEGER.test(value) ? Number(value) : value,
  );
}
