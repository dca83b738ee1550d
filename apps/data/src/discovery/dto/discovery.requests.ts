import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, ValidateNested } from 'class-validator';
import { IsOptional } from '@strata/platform';
import { SCHEMA_DISCOVERY_MODES } from '@strata/contracts';
import { SchemaDiscoveryConfigRequest } from '../../collections/dto/collection.requests.js';

export class UpdateDiscoverySettingsRequest {
  @ApiPropertyOptional({ enum: SCHEMA_DISCOVERY_MODES })
  @IsOptional()
  @IsIn(SCHEMA_DISCOVERY_MODES)
  schemaDiscoveryMode?: (typeof SCHEMA_DISCOVERY_MODES)[number];

  @ApiPropertyOptional({ type: SchemaDiscoveryConfigRequest })
  @IsOptional()
  @ValidateNested()
  @Type(() => SchemaDiscoveryConfigRequest)
  schemaDiscoveryConfig?: SchemaDiscoveryConfigRequest;
}

export class ListSuggestionsQuery {
  @ApiPropertyOptional({ enum: ['pending', 'accepted', 'rejected'] })
  @IsOptional()
  @IsIn(['pending', 'accepted', 'rejected'])
  status?: 'pending' | 'accepted' | 'rejected';
}
