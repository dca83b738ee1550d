import { ValidateBy } from 'class-validator';

export interface TextRule {
  /** The message when the value is absent or empty (blank too, with `notBlank`). */
  readonly required: string;
  /** The message when the value is there but not a string (`{"name": 123}`). */
  readonly notString: string;
  readonly maxLength: number;
  /** The message when the value is longer than `maxLength`. */
  readonly tooLong: string;
  readonly notBlank?: boolean;
}

/**
 * A string field checked as one rule with one message (the spec's `Function name
 * is required.` when it is missing), instead of one message per class-validator
 * constraint.
 */
export function IsText(rule: TextRule): PropertyDecorator {
  const present = (value: unknown): value is string =>
    typeof value === 'string' && (rule.notBlank ? /\S/.test(value) : value.length > 0);
  return ValidateBy({
    name: 'isText',
    validator: {
      validate: (value: unknown) => present(value) && value.length <= rule.maxLength,
      defaultMessage: (args) => {
        const value: unknown = args?.value;
        if (present(value)) return rule.tooLong;
        return value === undefined || value === null || typeof value === 'string' ? rule.required : rule.notString;
      },
    },
  });
}
