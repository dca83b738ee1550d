import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, RateLimit, RequirePermission } from '@strata/platform';
import { CreateCollectionRequest } from '../dto/collection.requests.js';
import { DefinitionValidationService, type DefinitionCheck } from './definition-validation.service.js';

const BASE = 'data/workspace/:workspace/api/v1';

/** `POST {data_base}/structures/validate` (also under `/collections`): a definition checked, nothing saved. */
@ApiTags('collections')
@ApiBearerAuth()
@Controller([`${BASE}/structures`, `${BASE}/collections`])
export class DefinitionValidationController {
  constructor(private readonly validation: DefinitionValidationService) {}

  @Post('validate')
  @HttpCode(200)
  @RateLimit('read') // writes nothing
  @ApiOperation({
    summary: 'Check a collection definition as a create would, without saving it',
    description:
      '200 `{valid: true}`, or `{valid: false, errors: [{field, message}]}` listing what the 400 of ' +
      '`POST /structures` would (one entry per bad field), and a taken recordSlug (which a create answers with 409).',
  })
  @ApiBody({ type: CreateCollectionRequest })
  @RequirePermission('structures', 'validate')
  validate(@CallerScope() scope: WorkspaceScope, @Body() raw: unknown): Promise<DefinitionCheck> {
    return this.validation.checkNew(scope, raw);
  }
}
