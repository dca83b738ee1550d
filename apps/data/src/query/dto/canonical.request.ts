import { IsNestedObject, IsOptional, MAX_OFFSET } from '@strata/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsInt, IsObject, IsString, Max, MaxLength, Min } from 'class-validator';

export class QueryPage {
  @ApiPropertyOptional({ default: 20, maximum: 100 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  offset?: number;

  @ApiPropertyOptional({ description: 'meta.nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  cursor?: string;

  @ApiPropertyOptional({ description: 'add meta.total (a COUNT)' })
  @IsOptional()
  @IsBoolean()
  includeCount?: boolean;
}

/** The canonical query definition (docs/queries.md). `where`, `text`, `sort`, `select` and `include` are checked against the collection. */
export class CanonicalQueryRequest {
  @ApiProperty({ description: 'collection slug' })
  @IsString()
  @MaxLength(100)
  resource!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  where?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '{query, fields?, typoTolerance?}' })
  @IsOptional()
  @IsObject()
  text?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: '[{field, direction}]' })
  @IsOptional()
  @IsArray()
  sort?: unknown[];

  @ApiPropertyOptional({ type: QueryPage })
  @IsOptional()
  @IsNestedObject(() => QueryPage)
  page?: QueryPage;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '{fields: [...]}' })
  @IsOptional()
  @IsObject()
  select?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object' },
    description: '[{foreignSlug, localField, foreignField, alias, joinType?}]',
  })
  @IsOptional()
  @IsArray()
  joins?: unknown[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    deprecated: true,
    description: 'older single join',
  })
  @IsOptional()
  @IsObject()
  join?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: '[{relation}]' })
  @IsOptional()
  @IsArray()
  include?: unknown[];
}
