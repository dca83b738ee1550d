import type { DeprecatedRoute } from '@strata/platform';

/** `PUT …/service-accounts/{id}/rotate`, the older form of `POST` on the same path (also reached as `PUT {base_url}/iam/…`). */
export const SERVICE_ACCOUNT_DEPRECATED_ROUTES: readonly DeprecatedRoute[] = [
  {
    method: 'PUT',
    pattern: /^\/workspace\/([^/]+)\/api\/v1\/service-accounts\/([^/]+)\/rotate$/,
    sunset: '2026-10-29',
    successor: (match) => `/workspace/${match[1]}/api/v1/service-accounts/${match[2]}/rotate`,
  },
];
