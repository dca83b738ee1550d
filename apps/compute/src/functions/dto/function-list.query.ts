import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsOptional, MAX_INT32 } from '@strata/platform';
import { FUNCTION_SEARCH_FIELDS, type FunctionSearchField } from '../functions.repository.js';

/** `GET /compute-functions` query: search, searchField, limit, page, sort (a JSON array of {field, direction}). */
export class FunctionListQueryRequest {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({ enum: FUNCTION_SEARCH_FIELDS, default: 'name' })
  @IsOptional()
  @IsIn(FUNCTION_SEARCH_FIELDS)
  searchField?: FunctionSearchField;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 500 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  page?: number;

  @ApiPropertyOptional({
    description: 'JSON array of {field, direction}',
    example: '[{"field":"name","direction":"asc"}]',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  sort?: string;
}
