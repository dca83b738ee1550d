import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsQueryFlag } from '@strata/platform';

/** `POST /inbound-events/{id}/replay` query. */
export class ReplayQuery {
  /** `true`: answer what would run (200) and run nothing. */
  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @IsQueryFlag()
  dryRun?: boolean;
}
