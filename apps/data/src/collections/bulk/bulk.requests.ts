import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsString,
  IsUUID,
  Matches,
  ArrayMinSize,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { IsOptional } from '@strata/platform';
import { RECORD_SLUG } from '../dto/collection.requests.js';

export const MAX_BULK_CREATE = 50;
export const MAX_BULK_DELETE = 100;

/**
 * `POST /structures/bulk` (also `/collections/bulk`): the definitions under `structures` or
 * `collections` (one of them), each checked as `POST /structures` checks its body.
 */
export class BulkCreateCollectionsRequest {
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object' },
    description: `1–${MAX_BULK_CREATE} collection definitions (the body of POST /structures); or send them as \`collections\``,
  })
  @ValidateIf((o: BulkCreateCollectionsRequest) => o.collections === undefined || o.structures !== undefined)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_CREATE)
  structures?: unknown[];

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: 'the same as `structures`' })
  @ValidateIf((o: BulkCreateCollectionsRequest) => o.structures === undefined || o.collections !== undefined)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_CREATE)
  collections?: unknown[];
}

/** `DELETE /structures/bulk`: collections by id, by recordSlug, or both (1–100 in all). */
export class BulkDeleteCollectionsRequest {
  @ApiPropertyOptional({ type: [String], format: 'uuid' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_BULK_DELETE)
  @IsUUID('4', { each: true, message: 'ids must be UUIDs' })
  ids?: string[];

  @ApiPropertyOptional({ type: [String], example: ['blog-posts'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_BULK_DELETE)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  @Matches(RECORD_SLUG, { each: true, message: 'slugs must be recordSlugs (lowercase letters and digits, hyphens)' })
  slugs?: string[];
}

/** `DELETE /structures/{id}/properties`. */
export class RemovePropertiesRequest {
  @ApiProperty({ type: [String], description: 'names of top-level properties (1–200)' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(200)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  names!: string[];

  @ApiPropertyOptional({
    default: false,
    description: 'remove the values records hold for them too (in batches); without it, such values are a 409',
  })
  @IsOptional()
  @IsBoolean()
  force?: boolean;
}
