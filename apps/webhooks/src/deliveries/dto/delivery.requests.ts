import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject } from 'class-validator';
import { WEBHOOK_EVENTS, type WebhookEvent } from '@strata/contracts';
import { IsDateTime, IsOptional, NotAfter, PageQuery } from '@strata/platform';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../delivery.js';

export const DEFAULT_DELIVERY_LIMIT = 50;

/** Query of the delivery lists: `limit` (50 by default, at most 100), `offset`, `status`, `since`, `until`. */
export class ListDeliveriesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;

  @ApiPropertyOptional({ description: 'ISO 8601; deliveries created at or after' })
  @IsOptional()
  @IsDateTime({ message: 'must be an ISO 8601 date-time' })
  @NotAfter('until')
  since?: string;

  @ApiPropertyOptional({ description: 'ISO 8601; deliveries created before' })
  @IsOptional()
  @IsDateTime({ message: 'must be an ISO 8601 date-time' })
  until?: string;
}

/** `POST /webhook-subscriptions/{id}/test`. */
export class TestDeliveryRequest {
  @ApiProperty({ enum: WEBHOOK_EVENTS })
  @IsIn(WEBHOOK_EVENTS, { message: `must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  event!: WebhookEvent;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'sent under `data` of the test body' })
  @IsObject()
  payload!: Record<string, unknown>;
}
