import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { IsIn, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsOptional } from './optional.js';
import { checkBody } from './validation.pipe.js';

class Probe {
  @IsString({ message: 'domain must be a string' })
  @MaxLength(5, { message: 'domain must be at most 5 characters' })
  domain!: string;

  @IsOptional()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(10, { message: 'limit must be at most 10' })
  limit?: number;

  @IsOptional()
  @IsIn(['a', 'b'], { message: 'mode must be a or b' })
  @MaxLength(1, { message: 'mode must be one character' })
  mode?: string;
}

describe('the validation pipe’s details', () => {
  it('refuses an array where an object is expected with one message, not one per element', async () => {
    const { errors } = await checkBody(Probe, [{ domain: 'a' }, 2, 3]);
    expect(errors).toEqual([{ field: 'body', message: 'The request body must be a JSON object.' }]);
  });

  it('tells a value of the wrong type only that, not the checks a value of that type would fail', async () => {
    const { errors } = await checkBody(Probe, { domain: 123, limit: 'many' });
    expect(errors).toEqual([
      { field: 'domain', message: 'domain must be a string' },
      { field: 'limit', message: 'limit must be an integer' },
    ]);
  });

  it('gives every failed check of a value of the right type, one entry per field', async () => {
    const { errors } = await checkBody(Probe, { domain: 'example.com', limit: 0, mode: 'cc' });
    expect(errors).toEqual([
      { field: 'domain', message: 'domain must be at most 5 characters' },
      { field: 'limit', message: 'limit must be at least 1' },
      {
        field: 'mode',
        message: expect.stringMatching(
          /^(mode must be one character; mode must be a or b|mode must be a or b; mode must be one character)$/,
        ),
      },
    ]);
  });
});
