import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsString,
  Matches,
  Min,
  Validate,
  ValidatorConstraint,
} from 'class-validator';
import type { ValidatorConstraintInterface } from 'class-validator';
import { IsOptional } from '@strata/platform';
import { VISIBILITIES, type Visibility } from '../bucket.types.js';
import { patternProblem } from '../type-allowlist.js';

/** A bucket's name: lowercase letters, digits and hyphens, 1–63 characters. */
export const BUCKET_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Most entries in a bucket's type allowlist. */
export const MAX_ALLOWED_TYPES = 50;

@ValidatorConstraint({ name: 'allowedTypes' })
class AllowedTypes implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return Array.isArray(value) && value.every((v) => typeof v === 'string' && patternProblem(v) === undefined);
  }
  defaultMessage(): string {
    return "allowedTypes entries must be content types ('image/png'), families ('image/*') or '*/*'";
  }
}

/** The settings a bucket may change (its name is fixed). */
export class UpdateBucketRequest {
  @ApiPropertyOptional({ description: 'Largest file, in bytes (at most STORAGE_MAX_FILE_BYTES)' })
  @IsOptional()
  @IsInt({ message: 'maxFileBytes must be an integer' })
  @Min(1, { message: 'maxFileBytes must be at least 1' })
  maxFileBytes?: number;

  @ApiPropertyOptional({ type: [String], example: ['image/*', 'application/pdf'] })
  @IsOptional()
  @IsArray({ message: 'allowedTypes must be an array' })
  @ArrayMinSize(1, { message: 'allowedTypes must name at least one type (use */* for any)' })
  @ArrayMaxSize(MAX_ALLOWED_TYPES, { message: `allowedTypes may name at most ${MAX_ALLOWED_TYPES} types` })
  @Validate(AllowedTypes)
  allowedTypes?: string[];

  @ApiPropertyOptional({ enum: VISIBILITIES })
  @IsOptional()
  @IsIn(VISIBILITIES, { message: `defaultVisibility must be one of ${VISIBILITIES.join(', ')}` })
  defaultVisibility?: Visibility;
}

export class CreateBucketRequest extends UpdateBucketRequest {
  @ApiProperty({ example: 'avatars' })
  @IsString({ message: 'name must be a string' })
  @Matches(BUCKET_NAME, {
    message: 'name must be 1 to 63 lowercase letters, digits or hyphens, not starting or ending with a hyphen',
  })
  name!: string;
}
