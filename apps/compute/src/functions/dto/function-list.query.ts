import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { IsOptional, MAX_INT32, QueryInteger } from '@strata/platform';
import { IsSortParam } from '../../lists/is-sort-param.js';
import { DEFAULT_FUNCTION_SORT } from '../function-list.js';
import { FUNCTION_SEARCH_FIELDS, FUNCTION_SORT_FIELDS, type FunctionSearchField } from '../functions.repository.js';

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

  @QueryInteger(1, 1000, 500)
  limit?: number;

  @QueryInteger(1, MAX_INT32, 1)
  page?: number;

  @ApiPropertyOptional({
    description: 'JSON array of {field, direction}',
    example: '[{"field":"name","direction":"asc"}]',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  @IsSortParam(FUNCTION_SORT_FIELDS, DEFAULT_FUNCTION_SORT)
  sort?: string;
}
