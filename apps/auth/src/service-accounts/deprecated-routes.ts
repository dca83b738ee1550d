import type { DeprecatedRoute } from '@strata/platform';

/**
 * `PUT …/service-accounts/{id}/rotate`, the older form of `POST` on the same path (also reached
 * as `PUT {base_url}/iam/…`, so the successor is named absolutely, on `{auth_url}`).
 */
export function serviceAccountDeprecatedRoutes(issuer: string): readonly DeprecatedRoute[] {
  const authUrl = issuer.replace(/\/oidc\/?$/, '');
  return [
    {
      method: 'PUT',
      // Case-insensitive and with or without a trailing slash, as Express routes.
      pattern: /^\/workspace\/([^/]+)\/api\/v1\/service-accounts\/([^/]+)\/rotate\/?$/i,
      sunset: '2026-10-29',
      successor: (match) => `${authUrl}/workspace/${match[1]}/api/v1/service-accounts/${match[2]}/rotate`,
    },
  ];
}
