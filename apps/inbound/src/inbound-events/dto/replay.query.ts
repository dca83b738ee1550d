import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { IsOptional } from '@strata/platform';

/** `POST /inbound-events/{id}/replay` query. */
export class ReplayQuery {
  /** `true`: answer what would run (200) and run nothing. */
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'dryRun must be true or false' })
  dryRun?: 'true' | 'false';
}
