import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { IsOptional } from '@strata/platform';
import { MAX_LINK_SECONDS } from '../../downloads/signed-links.js';

/** `POST /files/{id}/sign`. */
export class SignRequest {
  @ApiPropertyOptional({ description: 'Seconds the link works (1 to 604800, 7 days)', default: 3600 })
  @IsOptional()
  @IsInt({ message: 'expiresIn must be an integer number of seconds' })
  @Min(1, { message: 'expiresIn must be at least 1' })
  @Max(MAX_LINK_SECONDS, { message: `expiresIn must be at most ${MAX_LINK_SECONDS} (7 days)` })
  expiresIn?: number;

  @ApiPropertyOptional({
    description: 'true: the link downloads (Content-Disposition attachment) even for types shown inline',
  })
  @IsOptional()
  @IsBoolean({ message: 'download must be true or false' })
  download?: boolean;
}
