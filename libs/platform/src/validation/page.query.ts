import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, Max, Min, registerDecorator } from 'class-validator';
import { IsOptional } from './optional.js';

/** Deepest offset a page may start at; walk further with cursors. */
export const MAX_OFFSET = 1_000_000;

/** `limit` (1 to 100; each list documents its default) and `offset`, shared by the list endpoints. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ default: 0 })
  @IsOptional()
  @Type(() => Number)
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
    Type(() => Number),
    IsIntegerFrom(min, max),
  );
}

/** One check and one message for an integer in a range (`abc` is not three problems). */
function IsIntegerFrom(min: number, max: number): PropertyDecorator {
  return (target: object, propertyName: string | symbol): void => {
    registerDecorator({
      name: 'isIntegerFrom',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max,
        defaultMessage: () => `${String(propertyName)} must be an integer from ${min} to ${max}`,
      },
    });
  };
}
