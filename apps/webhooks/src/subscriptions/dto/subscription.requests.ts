import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  Equals,
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
} from 'class-validator';
import { IsOptional } from '@strata/platform';
import { WEBHOOK_EVENTS } from '@strata/contracts';

const URL_RULE: Parameters<typeof IsUrl>[0] = {
  protocols: ['http', 'https'],
  require_protocol: true,
  require_tld: false,
};
const URL_MESSAGE = 'must be an http(s) URL';
const EVENTS_MESSAGE = `each value must be one of ${WEBHOOK_EVENTS.join(', ')}`;
const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;
const SECRET_MESSAGE = 'is server-managed: rotate it with POST /webhook-subscriptions/{id}/rotate-secret';

export class CreateSubscriptionRequest {
  @ApiProperty({ example: 'orders to billing' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @ApiProperty({ example: 'https://billing.example.com/hooks/strata' })
  @IsUrl(URL_RULE, { message: URL_MESSAGE })
  @MaxLength(2048)
  url!: string;

  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENTS, { each: true, message: EVENTS_MESSAGE })
  events!: string[];

  @ApiPropertyOptional({ type: [String], description: 'collection slugs; omitted means every collection' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ArrayUnique({ message: 'recordSlugs must not name a collection twice' })
  @Matches(SLUG, { each: true, message: 'each value must be a collection slug' })
  recordSlugs?: string[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  active?: boolean;

  @Equals(undefined, { message: SECRET_MESSAGE })
  secret?: never;
}

export class UpdateSubscriptionRequest {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUrl(URL_RULE, { message: URL_MESSAGE })
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENTS, isArray: true })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENTS, { each: true, message: EVENTS_MESSAGE })
  events?: string[];

  @ApiPropertyOptional({ type: [String], description: '[] clears the filter (every collection)' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ArrayUnique({ message: 'recordSlugs must not name a collection twice' })
  @Matches(SLUG, { each: true, message: 'each value must be a collection slug' })
  recordSlugs?: string[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  active?: boolean;

  @Equals(undefined, { message: SECRET_MESSAGE })
  secret?: never;
}
