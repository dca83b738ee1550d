import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsObject, ValidateNested } from 'class-validator';

/**
 * A field holding one object of the DTO `type`, checked field by field. class-validator's
 * `ValidateNested` alone also takes an array (it checks each element), so `[{...}]` passed and
 * was stored as `{"0": {...}}`: this refuses anything but a plain object first. Use it for every
 * nested object (ESLint refuses a bare `@ValidateNested()`).
 */
export function IsNestedObject(type: () => new () => object): PropertyDecorator {
  return applyDecorators(
    IsObject({ message: ({ property }) => `${property} must be an object` }),
    ValidateNested(),
    Type(type),
  );
}
