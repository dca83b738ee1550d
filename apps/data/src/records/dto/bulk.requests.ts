import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsObject, IsUUID, ValidateNested } from 'class-validator';
import { IsNestedObject, IsOptional } from '@strata/platform';

/** Most records one bulk or batch request may carry (the spec leaves it open). */
export const MAX_BULK_RECORDS = 1000;

export class BulkRecordItem {
  @ApiProperty({ type: 'object', additionalProperties: true })
  @IsObject()
  data!: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

export class BulkCreateOptions {
  @ApiPropertyOptional({ description: 'skip schema checks; needs records:manage' })
  @IsOptional()
  @IsBoolean()
  skipValidation?: boolean;

  @ApiPropertyOptional({ default: true, description: 'include the created records in the response' })
  @IsOptional()
  @IsBoolean()
  returnRecords?: boolean;
}

export class BulkCreateRequest {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('4', { message: 'structureId must be a UUID' })
  structureId!: string;

  @ApiProperty({ type: [BulkRecordItem], maxItems: MAX_BULK_RECORDS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_RECORDS)
  @ValidateNested({ each: true })
  @Type(() => BulkRecordItem)
  records!: BulkRecordItem[];

  @ApiPropertyOptional({ type: BulkCreateOptions })
  @IsOptional()
  @IsNestedObject(() => BulkCreateOptions)
  options?: BulkCreateOptions;
}

export class BulkUpdateItem {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('4', { message: 'id must be a UUID' })
  id!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'merged like PATCH; null unsets a field' })
  @IsObject()
  data!: Record<string, unknown>;
}

export class BulkUpdateOptions {
  @ApiPropertyOptional({ description: 'skip schema checks; needs records:manage' })
  @IsOptional()
  @IsBoolean()
  skipValidation?: boolean;

  @ApiPropertyOptional({ description: 'keep a version entry even in non-versioned collections' })
  @IsOptional()
  @IsBoolean()
  createVersions?: boolean;
}

export class BulkUpdateRequest {
  @ApiProperty({ type: [BulkUpdateItem], maxItems: MAX_BULK_RECORDS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_RECORDS)
  @ValidateNested({ each: true })
  @Type(() => BulkUpdateItem)
  updates!: BulkUpdateItem[];

  @ApiPropertyOptional({ type: BulkUpdateOptions })
  @IsOptional()
  @IsNestedObject(() => BulkUpdateOptions)
  options?: BulkUpdateOptions;
}

export class BulkDeleteRequest {
  @ApiProperty({ type: [String], maxItems: MAX_BULK_RECORDS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_RECORDS)
  @IsUUID('4', { each: true, message: 'each id must be a UUID' })
  ids!: string[];

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  permanent?: boolean;
}
