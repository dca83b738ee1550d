import { ValidateBy } from 'class-validator';
import { checkedCode } from '../function-code.js';

/**
 * Code that would run: a syntax error (naming line and column) or a legacy form
 * is reported with the body's other bad fields, one `details` entry each,
 * instead of after they are fixed. Anything that is not a non-empty string of
 * at most `maxLength` is left to the field's `IsText` rule, which has the one
 * message for it (and long code is never parsed).
 */
export function IsRunnableCode(maxLength: number): PropertyDecorator {
  const checkable = (value: unknown): value is string =>
    typeof value === 'string' && value.length > 0 && value.length <= maxLength;
  return ValidateBy({
    name: 'isRunnableCode',
    validator: {
      validate: (value: unknown) => !checkable(value) || checkedCode(value).ok,
      defaultMessage: (args) => {
        const value: unknown = args?.value;
        const check = checkable(value) ? checkedCode(value) : undefined;
        return check && !check.ok ? check.message : 'The code does not run.';
      },
    },
  });
}
