import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * Largest value of a PostgreSQL `integer` (int4): record versions, service
 * account ids, pages. `IsInt` alone accepts 1e308, which PostgreSQL refuses.
 */
export const MAX_INT32 = 2_147_483_647;

/** A calendar date, optionally with a time and offset: the ISO 8601 forms JavaScript and PostgreSQL read alike. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?)?$/i;

/** Whether `value` is an ISO 8601 date-time that JavaScript and PostgreSQL read alike. */
export function isDateTime(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m
    .slice(1)
    .map((part) => (part === undefined ? 0 : Number(part)));
  // PostgreSQL has no year 0; a day the month lacks (February 30) is refused, not rolled over.
  return (
    year! >= 1 &&
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysIn(year!, month!) &&
    hour! <= 23 &&
    minute! <= 59 &&
    second! <= 59 &&
    offsetHours! <= 23 &&
    offsetMinutes! <= 59 &&
    !Number.isNaN(Date.parse(value))
  );
}

function daysIn(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/**
 * An ISO 8601 date-time on a real calendar day (no February 30), year 0001 to
 * 9999. class-validator's `IsDateString` lets through dates that PostgreSQL
 * refuses with a 500, or that `new Date()` cannot represent.
 */
export function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTime',
      validator: {
        validate: isDateTime,
        defaultMessage: (args) => `${args?.property ?? 'value'} must be an ISO 8601 date-time (years 0001 to 9999)`,
      },
    },
    options,
  );
}

/**
 * The start of a time window (`since`) that must not come after its end (the
 * property named `end`, usually `until`), when both are valid date-times. An
 * inverted window is a mistake to name, not an empty page: every list with a
 * window answers it with the same 400.
 */
export function NotAfter(end: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'notAfter',
      constraints: [end],
      validator: {
        validate: (value: unknown, args) => {
          const other = (args?.object as Record<string, unknown> | undefined)?.[end];
          if (typeof value !== 'string' || typeof other !== 'string') return true;
          if (!isDateTime(value) || !isDateTime(other)) return true;
          return Date.parse(value) <= Date.parse(other);
        },
        defaultMessage: () => `must not be after ${end}`,
      },
    },
    options,
  );
}
