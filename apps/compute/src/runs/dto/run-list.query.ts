import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsUUID } from 'class-validator';
import { IsDateTime, IsOptional, MAX_INT32, NotAfter, QueryInteger } from '@strata/platform';
import { RUN_STATUSES, type RunStatus } from '../run-status.js';

/** `GET /function-runs` query: filters and a page (newest first). */
export class RunListQueryRequest {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'jobId must be a UUID' })
  jobId?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'functionId must be a UUID' })
  functionId?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'triggerId must be a UUID' })
  triggerId?: string;

  @ApiPropertyOptional({ enum: RUN_STATUSES })
  @IsOptional()
  @IsIn(RUN_STATUSES)
  status?: RunStatus;

  @ApiPropertyOptional({ description: 'Runs queued at or after this instant (ISO 8601)' })
  @IsOptional()
  @IsDateTime()
  @NotAfter('until')
  since?: string;

  @ApiPropertyOptional({ description: 'Runs queued before this instant (ISO 8601)' })
  @IsOptional()
  @IsDateTime()
  until?: string;

  @QueryInteger(1, MAX_INT32, 1)
  page?: number;

  @QueryInteger(1, 100, 50)
  limit?: number;
}
