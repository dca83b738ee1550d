import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject } from 'class-validator';
import { IsOptional } from '@strata/platform';
import type { JsonObject } from '../../json.js';

/** The resources a draft may hold the body of. */
export const DRAFT_RESOURCE_TYPES = ['compute-functions', 'function-triggers'] as const;
export type DraftResourceType = (typeof DRAFT_RESOURCE_TYPES)[number];

export class CreateDraftRequest {
  @ApiProperty({ enum: DRAFT_RESOURCE_TYPES })
  @IsIn(DRAFT_RESOURCE_TYPES, { message: `resourceType must be one of ${DRAFT_RESOURCE_TYPES.join(', ')}` })
  resourceType!: DraftResourceType;

  @ApiProperty({ description: 'The resource body, complete or not (checked when published)', type: Object })
  @IsObject({ message: 'data must be an object' })
  data!: JsonObject;
}

export class UpdateDraftRequest {
  @ApiProperty({ type: Object })
  @IsObject({ message: 'data must be an object' })
  data!: JsonObject;
}

export class DraftListQueryRequest {
  @ApiPropertyOptional({ enum: DRAFT_RESOURCE_TYPES })
  @IsOptional()
  @IsIn(DRAFT_RESOURCE_TYPES)
  resourceType?: DraftResourceType;
}
