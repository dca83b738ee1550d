import { ApiProperty } from '@nestjs/swagger';
import { IsObject } from 'class-validator';

/** `POST /structures/{id}/validate`: record data to check against the collection, written nowhere. */
export class ValidateRecordRequest {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'the data of a record to create' })
  @IsObject()
  data!: Record<string, unknown>;
}
