import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Type } from 'class-transformer';
import { IsArray, IsObject, IsString, ValidateNested } from 'class-validator';
import { IsOptional } from './optional.js';
import { createValidationPipe } from './validation.pipe.js';

class Item {
  @IsObject()
  data!: Record<string, unknown>;
}

class Body {
  @IsString()
  name!: string;

  @IsOptional()
  @IsObject()
  data?: Record<string, unknown>;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Item)
  items?: Item[];
}

const inherited = { toString: 'a', valueOf: 1, constructor: 'c', hasOwnProperty: true, nested: { toString: 'b' } };

describe('the validation pipe and free-form values', () => {
  it('keeps every key of free-form objects, at the top and inside nested DTOs', async () => {
    const body = JSON.parse(JSON.stringify({ name: 'n', data: inherited, items: [{ data: inherited }] })) as unknown;
    const out = (await createValidationPipe().transform(body, { type: 'body', metatype: Body })) as Body;
    expect(out).toBeInstanceOf(Body);
    expect(out.items![0]).toBeInstanceOf(Item);
    expect(out.data).toEqual(inherited);
    expect(out.items![0]!.data).toEqual(inherited);
  });

  it('keeps __proto__ as an own key, never as a prototype', async () => {
    const body = JSON.parse('{"name":"n","data":{"__proto__":{"polluted":true}}}') as unknown;
    const out = (await createValidationPipe().transform(body, { type: 'body', metatype: Body })) as Body;
    expect(Object.hasOwn(out.data!, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out.data)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
