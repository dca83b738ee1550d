import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayNotEmpty, IsArray, IsIn, IsObject, IsString, IsUUID, MaxLength } from 'class-validator';
import { IsNullable, IsOptional, MAX_INT32, QueryInteger } from '@strata/platform';
import { IsText } from '../../functions/dto/is-text.js';
import { EXECUTION_TYPES, type ExecutionType } from '../metadata/index.js';
import { IsSortParam } from '../../lists/is-sort-param.js';
import {
  DEFAULT_TRIGGER_SORT,
  TRIGGER_SEARCH_FIELDS,
  TRIGGER_SORT_FIELDS,
  type TriggerSearchField,
} from '../triggers.repository.js';

const NAME = {
  required: 'Trigger name is required.',
  notString: 'Trigger name must be a string.',
  maxLength: 200,
  tooLong: 'Trigger name must be at most 200 characters.',
  notBlank: true,
};

export class CreateTriggerRequest {
  @ApiProperty({ maxLength: 200 })
  @IsText(NAME)
  name!: string;

  @ApiPropertyOptional({ maxLength: 2000, nullable: true })
  @IsNullable()
  @IsString({ message: 'description must be a string.' })
  @MaxLength(2000, { message: 'description must be at most 2000 characters.' })
  description?: string | null;

  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', {
    message: ({ value }) =>
      value === undefined || value === null
        ? 'functionId is required: the UUID of a compute function.'
        : 'functionId must be a UUID.',
  })
  functionId!: string;

  @ApiPropertyOptional({ enum: EXECUTION_TYPES, default: 'on-demand' })
  @IsOptional()
  @IsIn(EXECUTION_TYPES, { message: `executionType must be one of ${EXECUTION_TYPES.join(', ')}.` })
  executionType?: ExecutionType;

  @ApiPropertyOptional({ type: Object, description: 'Per executionType (docs/compute.md, Triggers)' })
  @IsOptional()
  @IsObject({ message: 'triggerMetadata must be an object.' })
  triggerMetadata?: Record<string, unknown>;
}

export class UpdateTriggerRequest {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsText(NAME)
  name?: string;

  @ApiPropertyOptional({ maxLength: 2000, nullable: true })
  @IsNullable()
  @IsString({ message: 'description must be a string.' })
  @MaxLength(2000, { message: 'description must be at most 2000 characters.' })
  description?: string | null;

  @ApiPropertyOptional({ description: 'Accepted only when it is the trigger’s own: it cannot change' })
  @IsOptional()
  @IsIn(EXECUTION_TYPES, { message: `executionType must be one of ${EXECUTION_TYPES.join(', ')}.` })
  executionType?: ExecutionType;

  @ApiPropertyOptional({ type: Object, description: 'Replaces the stored metadata (omitted blocks are removed)' })
  @IsOptional()
  @IsObject({ message: 'triggerMetadata must be an object.' })
  triggerMetadata?: Record<string, unknown>;
}

export class TriggerListQueryRequest {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({ enum: TRIGGER_SEARCH_FIELDS, default: 'name' })
  @IsOptional()
  @IsIn(TRIGGER_SEARCH_FIELDS)
  searchField?: TriggerSearchField;

  @QueryInteger(1, 1000, 500)
  limit?: number;

  @QueryInteger(1, MAX_INT32, 1)
  page?: number;

  @ApiPropertyOptional({ description: 'JSON array of {field, direction}' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  @IsSortParam(TRIGGER_SORT_FIELDS, DEFAULT_TRIGGER_SORT)
  sort?: string;
}

/** The credentials an endpoint trigger can have issued anew. */
export const ROTATABLE_CREDENTIALS = ['apiKey', 'signingSecret'] as const;

/** `POST /function-triggers/{id}/rotate-credentials`: which to replace (default: every one the trigger uses). */
export class RotateCredentialsRequest {
  @ApiPropertyOptional({ type: [String], enum: ROTATABLE_CREDENTIALS })
  @IsOptional()
  @IsArray({ message: 'credentials must be a list.' })
  @ArrayNotEmpty({ message: 'credentials must name at least one credential.' })
  @IsIn(ROTATABLE_CREDENTIALS, {
    each: true,
    message: `credentials must list some of ${ROTATABLE_CREDENTIALS.join(', ')}.`,
  })
  credentials?: (typeof ROTATABLE_CREDENTIALS)[number][];
}
