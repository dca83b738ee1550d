import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { IsOptional, MAX_INT32, QueryInteger } from '@strata/platform';

/** OAuth scopes a service account may hold. */
export const SERVICE_ACCOUNT_SCOPES = ['openid', 'webhooks:replay', 'webhooks:cancel'] as const;
const SCOPE_LIST = new RegExp(`^(${SERVICE_ACCOUNT_SCOPES.join('|')})( (${SERVICE_ACCOUNT_SCOPES.join('|')}))*$`);

export class CreateServiceAccountRequest {
  @ApiProperty({ example: 'ingest-worker' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiPropertyOptional({ type: [String], default: ['client_credentials'] })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(1)
  @IsIn(['client_credentials'], { each: true, message: 'grant_types may only contain client_credentials' })
  grant_types?: string[];

  @ApiPropertyOptional({
    default: 'openid',
    description: `space-separated, from: ${SERVICE_ACCOUNT_SCOPES.join(', ')}`,
  })
  @IsOptional()
  @IsString()
  @Matches(SCOPE_LIST, { message: `scope must be space-separated values from: ${SERVICE_ACCOUNT_SCOPES.join(', ')}` })
  scope?: string;
}

export class RenameServiceAccountRequest {
  @ApiProperty()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;
}

export class DescribeServiceAccountRequest {
  @ApiProperty()
  @IsString()
  @MaxLength(2000)
  description!: string;
}

export class ListServiceAccountsQuery {
  @QueryInteger(1, MAX_INT32, 1)
  page?: number;

  @QueryInteger(1, 100, 50)
  limit?: number;
}
