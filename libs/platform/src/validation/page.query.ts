import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min, registerDecorator } from 'class-validator';
import { IsOptional } from './optional.js';
import { IntegerText } from './query-integer.js';
import { MAX_INT32 } from './ranges.js';

/** Deepest offset a page may start at; walk further with cursors. */
export const MAX_OFFSET = 1_000_000;

/** `limit` (1 to 100; each list documents its default) and `offset`, shared by the list endpoints. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100 })
  @IsOptional()
  @IntegerText()
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ default: 0 })
  @IsOptional()
  @IntegerText()
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  offset?: number;
}

/**
 * An optional integer query parameter from `min` to `max` (a page number, a page
 * size), converted from its text and documented with its default.
 */
export function QueryInteger(min: number, max: number, defaultValue: number): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ minimum: min, maximum: max, default: defaultValue }),
    IsOptional(),
    IntegerText(),
    IsIntegerFrom(min, max),
  );
}

/**
 * An optional integer query parameter that any 32-bit integer may take and that
 * is then clamped to `low`..`high` (the spec's rule for `/inbound-events`' limit):
 * only what is not an integer is refused, and the message says what happens to
 * one out of range.
 */
export function ClampedQueryInteger(low: number, high: number, defaultValue: number): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ default: defaultValue, description: `Clamped to ${low}-${high}` }),
    IsOptional(),
    IntegerText(),
    IsIntegerFrom(-MAX_INT32, MAX_INT32, (name) => `${name} must be an integer (it is clamped to ${low}-${high})`),
  );
}

/** One check and one message for an integer in a range (`abc` is not three problems). */
function IsIntegerFrom(
  min: number,
  max: number,
  message: (name: string) => string = (name) => `${name} must be an integer from ${min} to ${max}`,
): PropertyDecorator {
  return (target: object, propertyName: string | symbol): void => {
    registerDecorator({
      name: 'isIntegerFrom',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max,
        defaultMessage: () => message(String(propertyName)),
      },
    });
  };
}
