import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { IsOptional } from '@strata/platform';
import { ID_FORMATS, WORKSPACE_SLUG_MAX_LENGTH } from '@strata/contracts';

export class CreateWorkspaceRequest {
  @ApiProperty({ example: 'acme-prod', description: 'lowercase, hyphen-separated; fixed after creation' })
  @IsString()
  @MaxLength(WORKSPACE_SLUG_MAX_LENGTH)
  @Matches(ID_FORMATS.workspaceSlug, {
    message: 'slug must be lowercase letters and digits separated by single hyphens',
  })
  slug!: string;

  @ApiProperty({ example: 'Acme production' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;
}
