/**
 * ISO 8601 date-times as the API accepts them: a calendar date, optionally a
 * time with optional seconds and fraction, and an optional `Z` or offset.
 * A date alone means midnight UTC.
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Epoch milliseconds of an ISO 8601 string, or undefined when it is not one (or not a real date). */
export function parseIsoDatetime(value: string): number | undefined {
  const m = ISO_8601.exec(value);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Year 0000 is not a date PostgreSQL (or ISO 8601's common profile) accepts.
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return undefined;
  const normalized = m[4] === undefined ? `${m[1]}-${m[2]}-${m[3]}T00:00:00Z` : withZone(value.replace(' ', 'T'), m[7]);
  const ms = Date.parse(normalized);
  return Number.isNaN(ms) ? undefined : ms;
}

function withZone(value: string, zone: string | undefined): string {
  if (zone === undefined) return `${value}Z`;
  // Date.parse wants +hh:mm.
  if (/^[+-]\d{4}$/.test(zone)) return `${value.slice(0, -5)}${zone.slice(0, 3)}:${zone.slice(3)}`;
  return value;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
