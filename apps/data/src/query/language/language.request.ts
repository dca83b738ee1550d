import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsString, MaxLength } from 'class-validator';
import { IsOptional } from '@strata/platform';

export class LanguageQueryRequest {
  @ApiProperty({ example: 'FROM orders WHERE status = :status ORDER BY createdAt DESC LIMIT 10' })
  @IsString()
  @MaxLength(10_000)
  query!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'values of the :name parameters' })
  @IsOptional()
  @IsObject()
  parameters?: Record<string, unknown>;
}
