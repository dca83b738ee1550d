import { ValidateBy, type ValidationOptions } from 'class-validator';

/** The value of `STRATA_ENV` that turns on production safeguards. */
export const PRODUCTION = 'production';

/**
 * Refuses a setting left at its development default when `STRATA_ENV` is
 * `production`: a development encryption key or admin password in production is
 * a secret that everyone who read the source knows.
 */
export function NotDefaultInProduction(developmentDefault: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'notDefaultInProduction',
      validator: {
        validate: (value: unknown, args) =>
          (args?.object as { STRATA_ENV?: unknown }).STRATA_ENV !== PRODUCTION || value !== developmentDefault,
        defaultMessage: (args) =>
          `${args?.property ?? 'this setting'} must be set: its development default is refused when STRATA_ENV=production`,
      },
    },
    options,
  );
}
