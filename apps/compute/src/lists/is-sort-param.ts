import { registerDecorator, type ValidationArguments } from 'class-validator';
import type { SortKey } from '../functions/function-list.js';
import { parseSortParam } from '../functions/function-list.js';

/**
 * A list's `sort` parameter (a JSON array of `{field, direction}` over `fields`),
 * checked with the rest of the query: a bad sort is one `details` entry beside
 * every other bad parameter, its message naming each bad entry
 * (`sort[0].field: must be one of …`).
 */
export function IsSortParam<F extends string>(fields: readonly F[], defaults: readonly SortKey<F>[]) {
  return (target: object, propertyName: string): void => {
    registerDecorator({
      name: 'isSortParam',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) =>
          value === undefined || (typeof value === 'string' && !('errors' in parseSortParam(value, fields, defaults))),
        defaultMessage: (args?: ValidationArguments) => {
          const value: unknown = args?.value;
          if (typeof value !== 'string') return 'must be a JSON array of {field, direction}';
          const parsed = parseSortParam(value, fields, defaults);
          if (!('errors' in parsed)) return 'is not a valid sort';
          return parsed.errors.map((e) => (e.field === 'sort' ? e.message : `${e.field}: ${e.message}`)).join('; ');
        },
      },
    });
  };
}
