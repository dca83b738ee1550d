import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { IsOptional } from '@strata/platform';
import { ACTIONS, RESOURCES } from '@strata/contracts';

/** Actions beyond the CRUD set, valid on one resource only. */
export const RESOURCE_SPECIFIC_ACTIONS: Readonly<Record<string, readonly string[]>> = { secrets: ['reveal'] };

export class CreateGroupRequest {
  @ApiProperty({ example: 'data-readers' })
  @IsString()
  @Matches(/^[a-z0-9][a-z0-9_-]{0,99}$/, { message: 'name must be lowercase letters, digits, - or _ (at most 100)' })
  name!: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

export class UpdateGroupRequest {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

export class PolicyRequest {
  @ApiProperty({ enum: RESOURCES })
  @IsString()
  @IsIn([...RESOURCES], { message: `resource must be one of: ${RESOURCES.join(', ')}` })
  resource!: string;

  @ApiProperty({
    type: [String],
    example: ['retrieve', 'list'],
    description: `each one of: ${ACTIONS.join(', ')} (and reveal on secrets)`,
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(16)
  @IsString({ each: true })
  actions!: string[];
}

export class UpdatePolicyRequest {
  @ApiProperty({ type: [String] })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(16)
  @IsString({ each: true })
  actions!: string[];
}

export class AddMemberRequest {
  @ApiProperty({ enum: ['user', 'service_account'] })
  @IsIn(['user', 'service_account'])
  type!: 'user' | 'service_account';

  @ApiPropertyOptional({ description: 'user id (uuid) or service-account clientId; or give email for a user' })
  @ValidateIf((o: AddMemberRequest) => o.type === 'service_account' || o.email === undefined)
  @IsString()
  @IsNotEmpty()
  id?: string;

  @ApiPropertyOptional()
  @ValidateIf((o: AddMemberRequest) => o.type === 'user' && o.id === undefined)
  @IsString()
  @IsNotEmpty()
  email?: string;
}
