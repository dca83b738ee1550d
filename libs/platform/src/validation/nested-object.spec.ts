import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { IsInt } from 'class-validator';
import { IsOptional } from './optional.js';
import { IsNestedObject } from './nested-object.js';
import { createValidationPipe } from './validation.pipe.js';

class Policy {
  @IsOptional()
  @IsInt()
  max?: number;
}

class Body {
  @IsOptional()
  @IsNestedObject(() => Policy)
  policy?: Policy;
}

const check = (value: unknown) => createValidationPipe().transform(value, { type: 'body', metatype: Body });

describe('IsNestedObject', () => {
  it('takes one object of the nested type, checked field by field', async () => {
    const body = (await check({ policy: { max: 3 } })) as Body;
    expect(body.policy).toBeInstanceOf(Policy);
    await expect(check({ policy: { max: 'x' } })).rejects.toMatchObject({
      details: [expect.objectContaining({ field: 'policy.max' })],
    });
  });

  it('refuses an array, which ValidateNested alone would check element by element', async () => {
    for (const policy of [[{ max: 2 }], [], 5, 'x']) {
      await expect(check({ policy })).rejects.toMatchObject({
        details: [{ field: 'policy', message: 'policy must be an object' }],
      });
    }
  });
});
