import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { COLLECTION_STATUSES, SCHEMA_DISCOVERY_MODES } from '@strata/contracts';
import { IsNestedObject, IsOptional, IsQueryFlag, PageQuery } from '@strata/platform';

export const RECORD_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export class SchemaDiscoveryConfigRequest {
  @ApiPropertyOptional({ default: 10 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  batchSize?: number;

  @ApiPropertyOptional({ default: 100 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  maxKeysPerRecord?: number;

  @ApiPropertyOptional({ default: 3 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10)
  maxNestingDepth?: number;

  @ApiPropertyOptional({ default: 1000 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  maxStringLengthSampled?: number;
}

export class RetentionPolicyRequest {
  @ApiPropertyOptional({ description: 'keep at most this many versions per record' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  maxVersions?: number;

  @ApiPropertyOptional({ description: 'drop versions older than this many days (the current one is kept)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(36_500)
  maxAgeDays?: number;
}

/** Fields shared by create and update; on update every field is optional. */
class CollectionFields {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiPropertyOptional({
    description: 'property definitions (see docs/data.md)',
    type: 'array',
    items: { type: 'object' },
  })
  @IsOptional()
  @IsArray()
  properties?: unknown[];

  @ApiPropertyOptional({ enum: SCHEMA_DISCOVERY_MODES, default: 'strict' })
  @IsOptional()
  @IsIn(SCHEMA_DISCOVERY_MODES)
  schemaDiscoveryMode?: (typeof SCHEMA_DISCOVERY_MODES)[number];

  @ApiPropertyOptional({ deprecated: true, description: 'older form: true = strict, false = auto-evolving' })
  @IsOptional()
  @IsBoolean()
  isStrict?: boolean;

  @ApiPropertyOptional({ type: SchemaDiscoveryConfigRequest })
  @IsOptional()
  @IsNestedObject(() => SchemaDiscoveryConfigRequest)
  schemaDiscoveryConfig?: SchemaDiscoveryConfigRequest;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  enableVersioning?: boolean;

  @ApiPropertyOptional({ type: RetentionPolicyRequest })
  @IsOptional()
  @IsNestedObject(() => RetentionPolicyRequest)
  retentionPolicy?: RetentionPolicyRequest;

  @ApiPropertyOptional({ description: 'a top-level string property used for text search' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  defaultSearchField?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ enum: COLLECTION_STATUSES, default: 'active' })
  @IsOptional()
  @IsIn(COLLECTION_STATUSES)
  status?: (typeof COLLECTION_STATUSES)[number];
}

export class CreateCollectionRequest extends CollectionFields {
  @ApiProperty({ example: 'Blog posts' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @ApiPropertyOptional({ example: 'blog-posts', description: 'generated from the name when omitted' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(RECORD_SLUG, { message: 'recordSlug must be lowercase letters and digits separated by single hyphens' })
  recordSlug?: string;
}

export class UpdateCollectionRequest extends CollectionFields {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ description: 'fixed at creation: only the current value is accepted' })
  @IsOptional()
  @IsString()
  recordSlug?: string;
}

export class ListCollectionsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: COLLECTION_STATUSES })
  @IsOptional()
  @IsIn(COLLECTION_STATUSES)
  status?: (typeof COLLECTION_STATUSES)[number];

  @ApiPropertyOptional({ description: 'matches name or recordSlug, case-insensitively' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({ description: 'true: soft-deleted collections too (isDeleted: true), to find one to restore' })
  @IsOptional()
  @IsQueryFlag()
  includeDeleted?: boolean;
}
