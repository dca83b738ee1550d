import { setDeprecationHeaders } from '@strata/platform';
import { SAVED_QUERIES_SUNSET } from './deprecated-routes.js';

/** Deprecated forms a definition holds: `{{var}}` placeholders, a single legacy `join`. */
export interface DeprecatedForms {
  readonly placeholders: boolean;
  readonly join: boolean;
}

/** Where the successors of the deprecated forms are described. */
export const PLACEHOLDERS_SUCCESSOR = '/docs/data.json#saved-query-variables';
export const JOINS_SUCCESSOR = '/docs/data.json#joins';

/** A definition's deprecated forms. */
export function deprecatedForms(definition: Record<string, unknown>, legacyPlaceholders: boolean): DeprecatedForms {
  return { placeholders: legacyPlaceholders, join: definition['join'] !== undefined };
}

/**
 * `Deprecation`, `Sunset` and `Link` for each deprecated form a saved query used: its `{{var}}`
 * placeholders and its promoted legacy `join` go with the other saved-query forms (`/smart-queries`,
 * the slug route) on {@link SAVED_QUERIES_SUNSET}.
 */
export function markDeprecatedForms(
  res: { setHeader(name: string, value: string): unknown; getHeader?(name: string): unknown },
  forms: DeprecatedForms,
): void {
  if (forms.placeholders) {
    setDeprecationHeaders(res, { sunset: SAVED_QUERIES_SUNSET, successor: PLACEHOLDERS_SUCCESSOR });
  }
  if (forms.join) setDeprecationHeaders(res, { sunset: SAVED_QUERIES_SUNSET, successor: JOINS_SUCCESSOR });
}
