import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IntegerText,
  IsDateTime,
  IsNestedObject,
  IsNullable,
  IsOptional,
  IsQueryFlag,
  MAX_INT32,
  PageQuery,
} from '@strata/platform';
import { IsBoolean, IsInt, IsObject, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';

/** Caller metadata and time to live, accepted by create and PATCH. */
class RecordWriteFields {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'time to live: the record expires this many seconds from now' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10 * 365 * 86_400)
  ttlSeconds?: number;

  @ApiPropertyOptional({ description: 'when the record expires (ISO 8601); null on PATCH clears it', nullable: true })
  @IsNullable()
  @IsDateTime({ message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: string | null;
}

export class CreateRecordRequest extends RecordWriteFields {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('4', { message: 'structureId must be a UUID' })
  structureId!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  @IsObject()
  data!: Record<string, unknown>;
}

export class UpdateOptions {
  @ApiPropertyOptional({ description: 'keep a version entry even when the collection is not versioned' })
  @IsOptional()
  @IsBoolean()
  createVersion?: boolean;

  @ApiPropertyOptional({ description: 'skip schema checks; needs records:manage' })
  @IsOptional()
  @IsBoolean()
  skipValidation?: boolean;
}

export class PatchRecordRequest extends RecordWriteFields {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'null unsets a field' })
  @IsObject()
  data!: Record<string, unknown>;

  @ApiPropertyOptional({ type: UpdateOptions })
  @IsOptional()
  @IsNestedObject(() => UpdateOptions)
  options?: UpdateOptions;
}

export class ReplaceRecordRequest {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'fields not supplied are removed' })
  @IsObject()
  data!: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

export class RestoreRecordRequest {
  @ApiProperty({ minimum: 1, maximum: MAX_INT32 })
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  version!: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string;
}

export class GetRecordQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @IsQueryFlag()
  includeHistory?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsQueryFlag()
  includeChangelog?: boolean;

  @ApiPropertyOptional({
    description: 'reference fields to expand, comma-separated, dotted for nested (author,author.company)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  expand?: string;

  @ApiPropertyOptional({ description: 'return this version of the record', minimum: 1, maximum: MAX_INT32 })
  @IsOptional()
  @IntegerText()
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  version?: number;
}

export class ListRecordsQuery extends PageQuery {
  @ApiPropertyOptional({
    description: 'key:value terms separated by commas (see docs/queries.md)',
    example: 'status:active,price:>100',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  filter?: string;

  @ApiPropertyOptional({ description: 'fields, comma-separated; a leading - sorts descending', example: '-price,name' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  sort?: string;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page (keyset pagination)' })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  cursor?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'older name of limit' })
  @IsOptional()
  @IntegerText()
  @IsInt()
  @Min(1)
  @Max(100)
  pageSize?: number;

  @ApiPropertyOptional({ format: 'uuid', description: 'required on GET /records' })
  @IsOptional()
  @IsUUID('4', { message: 'structureId must be a UUID' })
  structureId?: string;

  @ApiPropertyOptional({ description: 'reference fields to expand, comma-separated, dotted for nested' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  expand?: string;

  @ApiPropertyOptional({ description: 'count the matching records (costs a COUNT query)' })
  @IsOptional()
  @IsQueryFlag()
  includeCount?: boolean;
}

export class DeleteRecordQuery {
  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsQueryFlag()
  permanent?: boolean;
}

export class ChangelogQuery {
  @ApiPropertyOptional({ default: 50, maximum: 500 })
  @IsOptional()
  @IntegerText()
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsDateTime({ message: 'startDate must be an ISO 8601 date-time' })
  startDate?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsDateTime({ message: 'endDate must be an ISO 8601 date-time' })
  endDate?: string;
}
