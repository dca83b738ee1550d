import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsNotEmpty, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsNestedObject, IsNullable, IsOptional } from '@strata/platform';

const PLAN_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const PLAN_NAME_MESSAGE = 'name must be lowercase letters and digits separated by single hyphens';

/** A limit: a whole number from 0, or null for unlimited. */
const Limit = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: Number, nullable: true, description: 'null: unlimited' }),
    IsNullable(),
    IsInt({ message: ({ property }) => `${property} must be a whole number or null` }),
    Min(0),
    Max(Number.MAX_SAFE_INTEGER),
  );

const Feature = (): PropertyDecorator =>
  applyDecorators(ApiPropertyOptional({ type: Boolean }), IsOptional(), IsBoolean());

/** Limits given; on create, one left out is unlimited; on update, one left out keeps its value. */
export class PlanLimitsRequest {
  @Limit() records?: number | null;
  @Limit() storageBytes?: number | null;
  @Limit() functionExecutionsPerMonth?: number | null;
  @Limit() functions?: number | null;
  @Limit() triggers?: number | null;
  @Limit() orchestrations?: number | null;
  @Limit() webhookSubscriptions?: number | null;
  @Limit() serviceAccounts?: number | null;
}

/** Features given; on create, one left out is on; on update, one left out keeps its value. */
export class PlanFeaturesRequest {
  @Feature() endpoints?: boolean;
  @Feature() inboundCapture?: boolean;
  @Feature() temporal?: boolean;
}

export class UpdatePlanRequest {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiPropertyOptional({ type: PlanLimitsRequest })
  @IsOptional()
  @IsNestedObject(() => PlanLimitsRequest)
  limits?: PlanLimitsRequest;

  @ApiPropertyOptional({ type: PlanFeaturesRequest })
  @IsOptional()
  @IsNestedObject(() => PlanFeaturesRequest)
  features?: PlanFeaturesRequest;
}

export class CreatePlanRequest extends UpdatePlanRequest {
  @ApiProperty({ example: 'starter' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(63)
  @Matches(PLAN_NAME, { message: PLAN_NAME_MESSAGE })
  name!: string;
}

export class AssignPlanRequest {
  @ApiProperty({ example: 'starter', description: 'the name of an existing plan' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(63)
  @Matches(PLAN_NAME, { message: 'plan must be the name of a plan' })
  plan!: string;
}
