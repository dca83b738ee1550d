import type { Response } from 'express';

export interface DeprecationInfo {
  /** Sunset date, ISO `YYYY-MM-DD`; sent as an HTTP-date. None when no date is announced. */
  readonly sunset?: string;
  /** The successor path; `:name` parameters are filled from the request's route parameters. */
  readonly successor: string;
}

/** Sets `Deprecation: true`, `Sunset` (when there is a date) and `Link: <successor>; rel=successor-version` on a response. */
export function setDeprecationHeaders(
  res: Pick<Response, 'setHeader'> | { setHeader(name: string, value: string): unknown },
  info: DeprecationInfo,
  params: Record<string, string> = {},
): void {
  const successor = info.successor.replace(/:([A-Za-z0-9_]+)/g, (whole, name: string) =>
    params[name] !== undefined ? encodeURIComponent(params[name]) : whole,
  );
  res.setHeader('Deprecation', 'true');
  if (info.sunset !== undefined) res.setHeader('Sunset', new Date(`${info.sunset}T23:59:59Z`).toUTCString());
  res.setHeader('Link', `<${successor}>; rel="successor-version"`);
}
