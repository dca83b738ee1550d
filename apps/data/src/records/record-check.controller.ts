import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ErrorCode } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { CallerScope, RateLimit, RequirePermission, StrataException, UuidPipe } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { UpdateCollectionRequest } from '../collections/dto/collection.requests.js';
import {
  DefinitionValidationService,
  type ChangeCheck,
} from '../collections/validate/definition-validation.service.js';
import { checkBody } from '../schema/checked-body.js';
import { isPlainObject } from '../schema/issues.js';
import { ValidateRecordRequest } from './dto/validate.request.js';
import { RecordValidator } from './record-validation.js';

const BASE = 'data/workspace/:workspace/api/v1';

/** What a check answers: the data fits, or every problem with it. */
export type RecordCheck = { valid: true } | { valid: false; errors: { field: string; message: string }[] };

/**
 * `POST {data_base}/structures/{id}/validate` (also under `/collections`), which writes nothing:
 * - with `{data}`: checks record data against the collection as a create would (types,
 *   constraints, required fields, computed fields, reference targets). Uniqueness is not
 *   checked: another write could take a value between the check and a create, so only the
 *   create can say;
 * - with anything else, a proposed definition (the body of `PUT /structures/{id}`): checks it as
 *   the update would, then the collection's live records against it (DefinitionValidationService).
 */
@ApiTags('collections')
@ApiBearerAuth()
@ApiExtraModels(ValidateRecordRequest, UpdateCollectionRequest)
@Controller([`${BASE}/structures`, `${BASE}/collections`])
export class RecordCheckController {
  constructor(
    private readonly collections: CollectionsRepository,
    private readonly validator: RecordValidator,
    private readonly definitions: DefinitionValidationService,
  ) {}

  @Post(':id/validate')
  @HttpCode(200)
  @RateLimit('read') // writes nothing
  @ApiOperation({
    summary: 'Check record data, or a proposed definition and the existing records, without writing anything',
    description:
      '`{data}`: `{valid: true}` or `{valid: false, errors}` as a record create would list them. A proposed ' +
      'definition (the body of PUT): `{valid: false, errors}` as the PUT would list them, or `{valid, errors: [], ' +
      'records: {checked, failed, byField, sample: [{id, errors}]}, migration: {required, properties}}` for the ' +
      'live records against it, and whether the change would start a migration (of which properties).',
  })
  @ApiBody({
    schema: {
      oneOf: [{ $ref: getSchemaPath(ValidateRecordRequest) }, { $ref: getSchemaPath(UpdateCollectionRequest) }],
    },
  })
  @RequirePermission('structures', 'validate')
  async validate(
    @CallerScope() scope: WorkspaceScope,
    @Param('id', UuidPipe) id: string,
    @Body() raw: unknown,
  ): Promise<RecordCheck | ChangeCheck> {
    if (!isPlainObject(raw) || !Object.hasOwn(raw, 'data')) return this.definitions.checkChange(scope, id, raw);
    const { body, problems } = await checkBody(ValidateRecordRequest, raw);
    if (problems.length) throw StrataException.validation([...problems]);
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
