import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';

export class AddAllowedDomainRequest {
  @ApiProperty({ example: 'api.example.com', description: 'A host name, or *.example.com for every name under it' })
  @IsString({ message: 'domain must be a string' })
  @MaxLength(255, { message: 'domain must be at most 255 characters' })
  domain!: string;
}
