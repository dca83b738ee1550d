import type { DeprecatedRoute } from '@strata/platform';

/** Saved queries' deprecated forms (`{{var}}`, `/smart-queries`, the slug route) sunset together. */
export const SAVED_QUERIES_SUNSET = '2026-10-29';

/** `{data_base}/smart-queries/...`, the deprecated alias of `{data_base}/saved-queries/...`. */
export const SAVED_QUERY_DEPRECATED_ROUTES: readonly DeprecatedRoute[] = [
  {
    // Case-insensitive, as Express routes.
    pattern: /^(\/data\/workspace\/[^/]+\/api\/v1)\/smart-queries(\/.*)?$/i,
    sunset: SAVED_QUERIES_SUNSET,
    successor: (match) => `${match[1]}/saved-queries${match[2] ?? ''}`,
  },
];
