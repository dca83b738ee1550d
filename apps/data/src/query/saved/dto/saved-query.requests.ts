import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsObject, IsString, MaxLength } from 'class-validator';
import { IsOptional } from '@strata/platform';

export class CreateSavedQueryRequest {
  @ApiProperty({ example: 'expensive-active-products' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'a canonical query definition; values may be ${var} placeholders',
  })
  @IsObject()
  query!: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'name → {type, required?, default?}',
  })
  @IsOptional()
  @IsObject()
  variables?: Record<string, unknown>;
}

export class ExecuteSavedQueryRequest {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'values of the declared variables' })
  @IsOptional()
  @IsObject()
  variables?: Record<string, unknown>;
}

export class TestSavedQueryRequest {
  @ApiProperty({ type: 'object', additionalProperties: true })
  @IsObject()
  query!: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'declarations: name → {type, required?, default?}',
  })
  @IsOptional()
  @IsObject()
  variables?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'values to run the test with' })
  @IsOptional()
  @IsObject()
  values?: Record<string, unknown>;
}
