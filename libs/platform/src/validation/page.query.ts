import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
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
    IsInt(),
    Min(min),
    Max(max),
  );
}
