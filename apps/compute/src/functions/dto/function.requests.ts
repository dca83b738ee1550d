import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsString, MaxLength } from 'class-validator';
import { IsNullable, IsOptional } from '@strata/platform';
import { IsText } from './is-text.js';
import { IsRunnableCode } from './is-runnable-code.js';

/** Longest function name and description, in characters. */
export const MAX_FUNCTION_NAME = 200;
export const MAX_FUNCTION_DESCRIPTION = 2000;
/** Largest function code, in characters (a function is one file; libraries are not bundled in). */
export const MAX_FUNCTION_CODE = 256 * 1024;

const NAME = {
  required: 'Function name is required.',
  notString: 'Function name must be a string.',
  maxLength: MAX_FUNCTION_NAME,
  tooLong: `Function name must be at most ${MAX_FUNCTION_NAME} characters.`,
  notBlank: true,
};
const CODE = {
  required: 'Function code is required.',
  notString: 'Function code must be a string.',
  maxLength: MAX_FUNCTION_CODE,
  tooLong: `Function code must be at most ${MAX_FUNCTION_CODE} characters.`,
};

/** An optional description; `null` clears it. */
const Description = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ maxLength: MAX_FUNCTION_DESCRIPTION, nullable: true }),
    IsNullable(),
    IsString({ message: 'description must be a string.' }),
    MaxLength(MAX_FUNCTION_DESCRIPTION, {
      message: `description must be at most ${MAX_FUNCTION_DESCRIPTION} characters.`,
    }),
  );

export class CreateFunctionRequest {
  @ApiProperty({ maxLength: MAX_FUNCTION_NAME })
  @IsText(NAME)
  name!: string;

  @Description()
  description?: string | null;

  @ApiProperty({ description: 'JavaScript defining `async function run()`', maxLength: MAX_FUNCTION_CODE })
  @IsText(CODE)
  @IsRunnableCode(MAX_FUNCTION_CODE)
  code!: string;
}

export class UpdateFunctionRequest {
  @ApiPropertyOptional({ maxLength: MAX_FUNCTION_NAME })
  @IsOptional()
  @IsText(NAME)
  name?: string;

  @Description()
  description?: string | null;

  @ApiPropertyOptional({ maxLength: MAX_FUNCTION_CODE })
  @IsOptional()
  @IsText(CODE)
  @IsRunnableCode(MAX_FUNCTION_CODE)
  code?: string;
}

/** `POST /compute-functions/test`: code run once through the system default trigger. */
export class TestFunctionRequest {
  @ApiProperty({ maxLength: MAX_FUNCTION_CODE })
  @IsText(CODE)
  @IsRunnableCode(MAX_FUNCTION_CODE)
  code!: string;

  @ApiProperty({ description: 'Becomes executionParams', type: Object })
  @IsObject({ message: 'params is required and must be an object.' })
  params!: Record<string, unknown>;
}
