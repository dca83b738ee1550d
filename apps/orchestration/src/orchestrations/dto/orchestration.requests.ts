import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsBoolean, IsDefined, IsIn, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { IsNullable, IsOptional, QueryInteger } from '@strata/platform';
import { ORCHESTRATION_STATUSES, type OrchestrationStatus } from '../orchestration.entity.js';
import { ORCHESTRATION_SORT_FIELDS, type OrchestrationSortField } from '../orchestrations.repository.js';

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export class CreateOrchestrationRequest {
  @ApiProperty({ maxLength: 100 })
  @IsString({ message: 'slug is required: lowercase letters and digits, single hyphens between' })
  @MaxLength(100, { message: 'slug must be at most 100 characters' })
  @Matches(SLUG, { message: 'slug must be lowercase letters and digits, single hyphens between' })
  slug!: string;

  @ApiProperty({ maxLength: 200 })
  @IsString({ message: 'name is required' })
  @MinLength(1, { message: 'name is required' })
  @MaxLength(200, { message: 'name must be at most 200 characters' })
  name!: string;

  @ApiPropertyOptional({ maxLength: 2000, nullable: true })
  @IsNullable()
  @IsString({ message: 'description must be a string' })
  @MaxLength(2000, { message: 'description must be at most 2000 characters' })
  description?: string | null;

  @ApiPropertyOptional({ enum: ORCHESTRATION_STATUSES, default: 'draft' })
  @IsOptional()
  @IsIn(ORCHESTRATION_STATUSES, { message: `status must be one of ${ORCHESTRATION_STATUSES.join(', ')}` })
  status?: OrchestrationStatus;

  @ApiPropertyOptional({ deprecated: true, description: 'The older form of status: true is active' })
  @IsOptional()
  @IsBoolean({ message: 'isActive must be a boolean' })
  isActive?: boolean;

  @ApiProperty({ type: Object, description: 'docs/orchestration.md, "Triggers"' })
  @IsDefined({ message: 'trigger is required' })
  trigger!: unknown;

  @ApiProperty({ type: [Object], description: 'docs/orchestration.md, "Step validation"' })
  @IsDefined({ message: 'steps is required' })
  steps!: unknown;
}

export class UpdateOrchestrationRequest {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString({ message: 'name must be a string' })
  @MinLength(1, { message: 'name must not be empty' })
  @MaxLength(200, { message: 'name must be at most 200 characters' })
  name?: string;

  @ApiPropertyOptional({ maxLength: 2000, nullable: true })
  @IsNullable()
  @IsString({ message: 'description must be a string' })
  @MaxLength(2000, { message: 'description must be at most 2000 characters' })
  description?: string | null;

  @ApiPropertyOptional({ enum: ORCHESTRATION_STATUSES })
  @IsOptional()
  @IsIn(ORCHESTRATION_STATUSES, { message: `status must be one of ${ORCHESTRATION_STATUSES.join(', ')}` })
  status?: OrchestrationStatus;

  @ApiPropertyOptional({ deprecated: true })
  @IsOptional()
  @IsBoolean({ message: 'isActive must be a boolean' })
  isActive?: boolean;

  @ApiPropertyOptional({ type: Object })
  @Allow()
  trigger?: unknown;

  @ApiPropertyOptional({ type: [Object] })
  @Allow()
  steps?: unknown;
}

export class OrchestrationListQueryRequest {
  @QueryInteger(1, 1_000_000, 1)
  page?: number;

  @QueryInteger(1, 100, 20)
  pageSize?: number;

  @ApiPropertyOptional({ enum: ORCHESTRATION_SORT_FIELDS, default: 'createdAt' })
  @IsOptional()
  @IsIn(ORCHESTRATION_SORT_FIELDS, { message: `sort must be one of ${ORCHESTRATION_SORT_FIELDS.join(', ')}` })
  sort?: OrchestrationSortField;

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc' })
  @IsOptional()
  @IsIn(['asc', 'desc'], { message: 'order must be asc or desc' })
  order?: 'asc' | 'desc';
}
