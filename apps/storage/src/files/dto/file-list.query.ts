import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { COLLECTION_SLUG } from '@strata/contracts';
import { ClampedQueryInteger, IsDateTime, IsOptional, IsQueryFlag, NotAfter } from '@strata/platform';
import { BUCKET_NAME } from '../../buckets/dto/bucket.requests.js';
import { SORTS, type FileSort } from '../file.types.js';

/** `GET /files`: filters, a sort and a keyset page (docs/storage.md, "Listing"). */
export class FileListQuery {
  @ClampedQueryInteger(1, 100, 20)
  limit?: number;

  @ApiPropertyOptional({ description: 'pagination.nextCursor of the previous page' })
  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @MaxLength(2048, { message: 'cursor must be at most 2048 characters' })
  cursor?: string;

  @ApiPropertyOptional({ enum: SORTS, default: '-createdAt' })
  @IsOptional()
  @IsIn(SORTS, { message: `sort must be one of ${SORTS.join(', ')}` })
  sort?: FileSort;

  @ApiPropertyOptional()
  @IsOptional()
  @Matches(BUCKET_NAME, { message: 'bucket must be a bucket name' })
  bucket?: string;

  @ApiPropertyOptional({ description: 'Names starting with this text' })
  @IsOptional()
  @IsString({ message: 'prefix must be a string' })
  @MaxLength(1024, { message: 'prefix must be at most 1024 characters' })
  prefix?: string;

  @ApiPropertyOptional({ enum: ['/'], description: 'Group names below the prefix into folders (prefixes)' })
  @IsOptional()
  @IsIn(['/'], { message: "delimiter must be '/'" })
  delimiter?: '/';

  @ApiPropertyOptional({ description: 'Names containing this text (any case)' })
  @IsOptional()
  @IsString({ message: 'contains must be a string' })
  @MaxLength(256, { message: 'contains must be at most 256 characters' })
  contains?: string;

  @ApiPropertyOptional({ example: 'image/*' })
  @IsOptional()
  @Matches(/^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126})$/, {
    message: "contentType must be a content type ('image/png') or a family ('image/*')",
  })
  contentType?: string;

  @ApiPropertyOptional({ description: 'Files linked to records of this collection' })
  @IsOptional()
  @Matches(COLLECTION_SLUG, { message: 'linkCollection must be a collection slug' })
  linkCollection?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Files linked to this record' })
  @IsOptional()
  @IsUUID('all', { message: 'linkRecordId must be a UUID' })
  linkRecordId?: string;

  @ApiPropertyOptional({ description: 'Created at or after this instant (ISO 8601)' })
  @IsOptional()
  @IsDateTime()
  @NotAfter('createdBefore')
  createdAfter?: string;

  @ApiPropertyOptional({ description: 'Created at or before this instant (ISO 8601)' })
  @IsOptional()
  @IsDateTime()
  createdBefore?: string;

  @ApiPropertyOptional({ description: 'Count the matching files (pagination.total)' })
  @IsOptional()
  @IsQueryFlag()
  includeCount?: boolean;
}

/** `GET /files/{id}` query. */
export class FileGetQuery {
  @ApiPropertyOptional({ enum: ['json', 'media'], description: 'media: the bytes instead of the metadata' })
  @IsOptional()
  @IsIn(['json', 'media'], { message: 'alt must be json or media' })
  alt?: 'json' | 'media';

  @ApiPropertyOptional({ description: 'true: Content-Disposition attachment even for types shown inline' })
  @IsOptional()
  @IsQueryFlag()
  download?: boolean;
}
