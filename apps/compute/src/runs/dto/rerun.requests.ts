import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsObject, IsString, MaxLength } from 'class-validator';
import { IsOptional } from '@strata/platform';

/** `POST /function-runs/{id}/rerun`: every field optional. */
export class RerunRequest {
  @ApiPropertyOptional({
    default: false,
    description: 'true: the function’s current code; false: the version the run had',
  })
  @IsOptional()
  @IsBoolean({ message: 'useLatestCode must be a boolean.' })
  useLatestCode?: boolean;

  @ApiPropertyOptional({ maxLength: 1000 })
  @IsOptional()
  @IsString({ message: 'reason must be a string.' })
  @MaxLength(1000, { message: 'reason must be at most 1000 characters.' })
  reason?: string;

  @ApiPropertyOptional({ type: Object, description: 'Merged over the original executionParams' })
  @IsOptional()
  @IsObject({ message: 'overrideParams must be an object.' })
  overrideParams?: Record<string, unknown>;
}
