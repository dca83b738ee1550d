import { ValidateBy } from 'class-validator';

export interface TextRule {
  /** The message when the value is absent, not a string, or empty (blank too, with `notBlank`). */
  readonly required: string;
  readonly maxLength: number;
  /** The message when the value is longer than `maxLength`. */
  readonly tooLong: string;
  readonly notBlank?: boolean;
}

/**
 * A string field checked as one rule with one message (the spec's `Function name
 * is required.`), instead of one message per class-validator constraint.
 */
export function IsText(rule: TextRule): PropertyDecorator {
  const present = (value: unknown): value is string =>
    typeof value === 'string' && (rule.notBlank ? /\S/.test(value) : value.length > 0);
  return ValidateBy({
    name: 'isText',
    validator: {
      validate: (value: unknown) => present(value) && value.length <= rule.maxLength,
      defaultMessage: (args) => (present(args?.value) ? rule.tooLong : rule.required),
    },
  });
}
