import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsUUID } from 'class-validator';
import { ClampedQueryInteger, IsDateTime, IsOptional, MAX_INT32, NotAfter, QueryInteger } from '@strata/platform';
import {
  DISPATCH_STATUSES,
  SIGNATURE_RESULTS,
  type DispatchStatus,
  type SignatureResult,
} from '../../events/inbound-event.entity.js';

/** `GET /inbound-events` query: the spec's filters and an offset page (newest first). */
export class InboundEventListQuery {
  /** Clamped to 1–100 (the spec's rule): any integer is accepted. */
  @ClampedQueryInteger(1, 100, 50)
  limit?: number;

  @QueryInteger(0, MAX_INT32, 0)
  offset?: number;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'triggerId must be a UUID' })
  triggerId?: string;

  @ApiPropertyOptional({ enum: SIGNATURE_RESULTS })
  @IsOptional()
  @IsIn(SIGNATURE_RESULTS, { message: `signatureResult must be one of ${SIGNATURE_RESULTS.join(', ')}` })
  signatureResult?: SignatureResult;

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
}
