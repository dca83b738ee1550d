import { ValidateBy, type ValidationOptions } from 'class-validator';

/** The one value of `STRATA_ENV` that accepts the published development defaults of secrets. */
export const DEVELOPMENT = 'development';

/**
 * Refuses a setting left at its development default unless `STRATA_ENV` is
 * explicitly `development`: a development encryption key or admin password in
 * production is a secret that everyone who read the source knows.
 */
export function NotDefaultInProduction(developmentDefault: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'notDefaultInProduction',
      validator: {
        validate: (value: unknown, args) =>
          (args?.object as { STRATA_ENV?: unknown }).STRATA_ENV === DEVELOPMENT || value !== developmentDefault,
        defaultMessage: (args) =>
          `${args?.property ?? 'this setting'} must be set: its published development default is accepted only when STRATA_ENV=development`,
      },
    },
    options,
  );
}
