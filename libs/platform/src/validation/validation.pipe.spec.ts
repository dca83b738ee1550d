import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsObject, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
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

class Step {
  @IsString({ message: 'name must be a string' })
  name!: string;

  @IsOptional()
  @IsObject({ message: 'params must be an object' })
  params?: Record<string, unknown>;
}

class Nested {
  @ValidateNested({ each: true })
  @Type(() => Step)
  steps!: Step[];

  @IsOptional()
  @IsObject({ message: 'data must be an object' })
  data?: Record<string, unknown>;
}

/** Parsed JSON keeps `__proto__` an own key; an object literal would set the prototype instead. */
const json = (text: string): unknown => JSON.parse(text);

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

  it('refuses __proto__ and constructor as unknown fields of a DTO, at any depth, with the other problems', async () => {
    const { errors } = await checkBody(
      Nested,
      json('{"steps":[{"name":"a","__proto__":{"x":1}},{"name":2,"constructor":"c"}],"constructor":1}'),
    );
    expect(errors).toEqual(
      expect.arrayContaining([
        { field: 'steps[1].name', message: 'name must be a string' },
        { field: 'steps[0].__proto__', message: 'property __proto__ should not exist' },
        { field: 'steps[1].constructor', message: 'property constructor should not exist' },
        { field: 'constructor', message: 'property constructor should not exist' },
      ]),
    );
    expect(errors).toHaveLength(4);
    const alone = await checkBody(Probe, json('{"domain":"a","__proto__":{"polluted":true}}'));
    expect(alone.errors).toEqual([{ field: '__proto__', message: 'property __proto__ should not exist' }]);
    // Every name of Object.prototype's, and prototype, which Nest's pipe deletes too.
    for (const key of ['prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__']) {
      const named = await checkBody(Nested, json(`{"steps":[{"name":"a","${key}":1}],"${key}":2}`));
      expect(named.errors).toEqual([
        { field: `steps[0].${key}`, message: `property ${key} should not exist` },
        { field: key, message: `property ${key} should not exist` },
      ]);
    }
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('keeps __proto__ and constructor as keys of free-form values', async () => {
    const { value, errors } = await checkBody(
      Nested,
      json(
        '{"steps":[{"name":"a","params":{"__proto__":1,"constructor":2,"toString":3}}],"data":{"__proto__":{"x":1},"prototype":4}}',
      ),
    );
    expect(errors).toEqual([]);
    expect(Object.keys(value!.steps[0]!.params!)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.keys(value!.data!)).toEqual(['__proto__', 'prototype']);
    expect(Object.getOwnPropertyDescriptor(value!.data, '__proto__')?.value).toEqual({ x: 1 });
  });

  it('checks a copy: the body a service goes on reading keeps every key', async () => {
    const raw = json('{"steps":[{"name":"a","params":{"__proto__":1,"constructor":2}}],"data":{"constructor":3}}');
    const before = JSON.stringify(raw);
    await checkBody(Nested, raw);
    expect(JSON.stringify(raw)).toBe(before);
  });
});
