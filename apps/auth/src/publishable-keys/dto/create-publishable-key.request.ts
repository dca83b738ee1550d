import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class CreatePublishableKeyRequest {
  @ApiProperty({ example: 'storefront' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @ApiProperty({
    type: [String],
    example: ['records:retrieve', 'records:list'],
    description: 'read permissions only: <resource>:retrieve or <resource>:list',
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(32)
  @IsString({ each: true })
  permissions!: string[];
}
