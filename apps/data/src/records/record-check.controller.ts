import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, RateLimit, RequirePermission, StrataException, UuidPipe } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { ValidateRecordRequest } from './dto/validate.request.js';
import { RecordValidator } from './record-validation.js';

const BASE = 'data/workspace/:workspace/api/v1';

/** What a check answers: the data fits, or every problem with it. */
export type RecordCheck = { valid: true } | { valid: false; errors: { field: string; message: string }[] };

/**
 * `POST {data_base}/structures/{id}/validate` (also under `/collections`): checks record data
 * against the collection as a create would (types, constraints, required fields, computed
 * fields, reference targets) and writes nothing. Uniqueness is not checked: another write could
 * take a value between the check and a create, so only the create can say.
 */
@ApiTags('collections')
@ApiBearerAuth()
@Controller([`${BASE}/structures`, `${BASE}/collections`])
export class RecordCheckController {
  constructor(
    private readonly collections: CollectionsRepository,
    private readonly validator: RecordValidator,
  ) {}

  @Post(':id/validate')
  @HttpCode(200)
  @RateLimit('read') // writes nothing
  @ApiOperation({ summary: 'Check record data against the collection without writing it' })
  @ApiBody({ type: ValidateRecordRequest })
  @RequirePermission('structures', 'validate')
  async validate(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Body() body: ValidateRecordRequest,
  ): Promise<RecordCheck> {
    const collection = await this.collections.find(scope, { id });
    try {
      await this.validator.forWrite(scope, undefined, collection, 'create', body.data, undefined);
      return { valid: true };
    } catch (error) {
      if (
        error instanceof StrataException &&
        error.code === ErrorCode.VALIDATION_ERROR &&
        Array.isArray(error.details)
      ) {
        return { valid: false, errors: error.details.map(({ field, message }) => ({ field, message })) };
      }
      throw error;
    }
  }
}
