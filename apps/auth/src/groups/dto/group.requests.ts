import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { IsNullable, IsOptional } from '@strata/platform';
import { ACTIONS, COLLECTION_SLUG, RESOURCES } from '@strata/contracts';

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

const COLLECTIONS_DESCRIPTION =
  'records only: the collection slugs the actions apply to; omitted or null for every collection (docs/identity.md)';

/** `collections` of a policy: validated slugs, at least one (null, not [], means every collection). */
function CollectionsField(): PropertyDecorator {
  return (target, key) => {
    for (const decorate of [
      ApiPropertyOptional({
        type: [String],
        nullable: true,
        example: ['orders'],
        description: COLLECTIONS_DESCRIPTION,
      }),
      IsNullable(),
      IsArray(),
      ArrayNotEmpty({ message: 'collections must name at least one collection (null or omitted: every collection)' }),
      ArrayMaxSize(100),
      ArrayUnique({ message: 'collections must not name a collection twice' }),
      IsString({ each: true }),
      MaxLength(100, { each: true }),
      Matches(COLLECTION_SLUG, { each: true, message: 'each value must be a collection slug' }),
    ])
      decorate(target, key);
  };
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

  @CollectionsField()
  collections?: string[] | null;
}

export class UpdatePolicyRequest {
  @ApiProperty({ type: [String] })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(16)
  @IsString({ each: true })
  actions!: string[];

  /** Omitted: the policy keeps its collections; null: every collection from now on. */
  @CollectionsField()
  collections?: string[] | null;
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
