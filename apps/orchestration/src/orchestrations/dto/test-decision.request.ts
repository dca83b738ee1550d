import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsObject } from 'class-validator';

/** `POST /orchestrations/{id}/steps/{stepId}/test-decision`. */
export class TestDecisionRequest {
  @ApiProperty({
    type: Object,
    description:
      '{input, context, steps: {<stepId>: {output}}}, what the paths read; an object with none of those keys is the input',
  })
  @IsDefined({ message: 'testData is required: an object' })
  @IsObject({ message: 'testData must be an object' })
  testData!: Record<string, unknown>;
}
