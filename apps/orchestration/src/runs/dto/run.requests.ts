import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsString, MaxLength } from 'class-validator';
import { IsOptional, QueryInteger } from '@strata/platform';
import { RUN_STATUSES, type RunStatus } from '../run-rows.js';

/** `POST /orchestrations/{id}/runs` (and `/trigger`). */
export class StartRunRequest {
  @ApiPropertyOptional({ type: Object, description: 'The run input (input.* in paths)' })
  @IsOptional()
  @IsObject({ message: 'input must be an object' })
  input?: Record<string, unknown>;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString({ message: 'correlationId must be a string' })
  @MaxLength(200, { message: 'correlationId must be at most 200 characters' })
  correlationId?: string;
}

export class RunListQueryRequest {
  @QueryInteger(1, 1_000_000, 1)
  page?: number;

  @QueryInteger(1, 100, 20)
  pageSize?: number;

  @ApiPropertyOptional({ enum: RUN_STATUSES })
  @IsOptional()
  @IsIn(RUN_STATUSES, { message: `status must be one of ${RUN_STATUSES.join(', ')}` })
  status?: RunStatus;
}

export class RunDetailQueryRequest {
  @ApiPropertyOptional({ enum: ['steps'] })
  @IsOptional()
  @IsIn(['steps'], { message: 'include may only be steps' })
  include?: 'steps';
}
