import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { IsNestedObject, IsOptional } from '@strata/platform';
import { SCHEMA_DISCOVERY_MODES } from '@strata/contracts';
import { SchemaDiscoveryConfigRequest } from '../../collections/dto/collection.requests.js';

export class UpdateDiscoverySettingsRequest {
  @ApiPropertyOptional({ enum: SCHEMA_DISCOVERY_MODES })
  @IsOptional()
  @IsIn(SCHEMA_DISCOVERY_MODES)
  schemaDiscoveryMode?: (typeof SCHEMA_DISCOVERY_MODES)[number];

  @ApiPropertyOptional({ type: SchemaDiscoveryConfigRequest })
  @IsOptional()
  @IsNestedObject(() => SchemaDiscoveryConfigRequest)
  schemaDiscoveryConfig?: SchemaDiscoveryConfigRequest;
}

export class ListSuggestionsQuery {
  @ApiPropertyOptional({ enum: ['pending', 'accepted', 'rejected'] })
  @IsOptional()
  @IsIn(['pending', 'accepted', 'rejected'])
  status?: 'pending' | 'accepted' | 'rejected';
}
