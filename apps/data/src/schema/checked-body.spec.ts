import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { IsInt, IsNotEmpty, IsObject, IsString, Max } from 'class-validator';
import { IsNestedObject, IsOptional } from '@strata/platform';
import { checkBody } from './checked-body.js';

class Page {
  @IsOptional()
  @IsInt()
  @Max(100)
  limit?: number;
}

class Body {
  @IsString()
  @IsNotEmpty()
  name!: string;

  @IsOptional()
  @IsObject()
  where?: Record<string, unknown>;

  @IsOptional()
  @IsNestedObject(() => Page)
  page?: Page;
}

const parse = (json: string): unknown => JSON.parse(json);

describe('checkBody', () => {
  it('returns the DTO instance, nested DTOs included, when the body is valid', async () => {
    const checked = await checkBody(Body, { name: 'n', where: { 'data.a': { eq: 1 } }, page: { limit: 5 } });
    expect(checked.problems).toEqual([]);
    expect(checked.body).toBeInstanceOf(Body);
    expect(checked.body.page).toBeInstanceOf(Page);
    expect(checked.body.where).toEqual({ 'data.a': { eq: 1 } });
  });

  it('keeps free-form keys that name an inherited method (class-transformer would drop them)', async () => {
    const body = parse('{"name": "n", "where": {"toString": {"valueOf": 1}, "data.hasOwnProperty": {"eq": "x"}}}');
    const checked = await checkBody(Body, body);
    expect(checked.problems).toEqual([]);
    expect(Object.keys(checked.body.where!)).toEqual(['toString', 'data.hasOwnProperty']);
    expect(Object.keys(checked.body.where!['toString'] as object)).toEqual(['valueOf']);
  });

  it('refuses by path the keys the validation pipe would delete silently', async () => {
    const body = parse(
      '{"name": "n", "where": {"constructor": {"eq": 1}, "or": [{"data.a": {"__proto__": 1}}], "a": {"prototype": 2}}}',
    );
    const checked = await checkBody(Body, body);
    expect(checked.problems).toEqual([
      { field: 'where.constructor', message: '"constructor" is not accepted as a field, operator or variable name' },
      {
        field: 'where.or[0].data.a.__proto__',
        message: '"__proto__" is not accepted as a field, operator or variable name',
      },
      { field: 'where.a.prototype', message: '"prototype" is not accepted as a field, operator or variable name' },
    ]);
    expect(checked.body.where).toEqual({ or: [{ 'data.a': {} }], a: {} });
    expect(Object.getPrototypeOf(checked.body.where!['or'])).toBe(Array.prototype);
  });

  it('reports problems of the DTO with the fields that passed, for later stages to check', async () => {
    const checked = await checkBody(Body, { name: '', where: { 'data.a': { eq: 1 } }, page: { limit: 500 }, extra: 1 });
    expect(checked.problems.map((p) => p.field).sort()).toEqual(['extra', 'name', 'page.limit']);
    expect(checked.body).toEqual({ where: { 'data.a': { eq: 1 } } });
  });

  it('answers a body that is not an object with the pipe’s problem', async () => {
    const checked = await checkBody(Body, ['a']);
    expect(checked.problems.length).toBeGreaterThan(0);
    expect(checked.body).toEqual({});
  });
});
