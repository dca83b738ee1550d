export interface DeprecationInfo {
  /** Sunset date, ISO `YYYY-MM-DD`; sent as an HTTP-date. None when no date is announced. */
  readonly sunset?: string;
  /** The successor path; `:name` parameters are filled from the request's route parameters. */
  readonly successor: string;
}

/**
 * Sets `Deprecation: true`, `Sunset` (when there is a date) and `Link: <successor>;
 * rel=successor-version` on a response. A response already marked for another deprecated
 * part of the same request (a `/smart-queries` alias with a legacy `join`) keeps both: the
 * links are listed together and the earlier sunset wins.
 */
export function setDeprecationHeaders(
  res: { setHeader(name: string, value: string): unknown; getHeader?(name: string): unknown },
  info: DeprecationInfo,
  params: Record<string, string> = {},
): void {
  const successor = info.successor.replace(/:([A-Za-z0-9_]+)/g, (whole, name: string) =>
    params[name] !== undefined ? encodeURIComponent(params[name]) : whole,
  );
  const link = `<${successor}>; rel="successor-version"`;
  const links = headerText(res, 'Link');
  res.setHeader('Deprecation', 'true');
  if (links === undefined || links === link) res.setHeader('Link', link);
  else if (!links.split(', ').includes(link)) res.setHeader('Link', `${links}, ${link}`);
  if (info.sunset !== undefined) {
    const sunset = new Date(`${info.sunset}T23:59:59Z`);
    const earlier = headerText(res, 'Sunset');
    if (earlier === undefined || new Date(earlier).getTime() > sunset.getTime()) {
      res.setHeader('Sunset', sunset.toUTCString());
    }
  }
}

function headerText(res: { getHeader?(name: string): unknown }, name: string): string | undefined {
  const value = res.getHeader?.(name);
  return typeof value === 'string' ? value : undefined;
}
