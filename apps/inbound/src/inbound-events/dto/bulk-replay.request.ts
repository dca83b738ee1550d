import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsUUID, Max, Min } from 'class-validator';
import { IsDateTime, IsOptional, NotAfter } from '@strata/platform';
import { DISPATCH_STATUSES, type DispatchStatus } from '../../events/inbound-event.entity.js';

/** The most arrivals one bulk replay replays. */
export const MAX_BULK_REPLAY = 100;

/**
 * `POST /inbound-events/replay`: replays the arrivals matching the filter, oldest
 * first, at most `limit`. A trigger or a time window is required, so that nothing
 * replays a whole workspace by accident. Rejected arrivals are never replayed.
 */
export class BulkReplayRequest {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'triggerId must be a UUID' })
  triggerId?: string;

  @ApiPropertyOptional({ enum: DISPATCH_STATUSES })
  @IsOptional()
  @IsIn(DISPATCH_STATUSES, { message: `dispatchStatus must be one of ${DISPATCH_STATUSES.join(', ')}` })
  dispatchStatus?: DispatchStatus;

  @ApiPropertyOptional({ description: 'Arrivals received at or after this instant (ISO 8601)' })
  @IsOptional()
  @IsDateTime()
  @NotAfter('until')
  since?: string;

  @ApiPropertyOptional({ description: 'Arrivals received at or before this instant (ISO 8601)' })
  @IsOptional()
  @IsDateTime()
  until?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_BULK_REPLAY, default: MAX_BULK_REPLAY })
  @IsOptional()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(MAX_BULK_REPLAY, { message: `limit must be at most ${MAX_BULK_REPLAY}` })
  limit?: number;
}
