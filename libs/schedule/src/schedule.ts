import { Cron } from 'croner';

/** Longest interval: 366 days, in seconds. */
export const MAX_INTERVAL_SECONDS = 366 * 24 * 60 * 60;
export const MAX_CRON_LENGTH = 200;
export const MAX_TIMEZONE_LENGTH = 64;

const CRON_FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'weekday', min: 0, max: 6 },
] as const;

/**
 * A croner job for a checked 5-field expression, never started (no callback).
 * `no-wildcard`: an expression whose minute and hour fields have no `*` and no
 * step (`30 2 * * *`, `0,30 2 * * *`, `30 2,14 * * *`) is a fixed-time job:
 * in the daylight-saving gap it fires once at the first instant after the gap,
 * and in the repeated hour only on the first occurrence. Other expressions
 * (`*\/15 * * * *`, `30 * * * *`) skip times in the gap and fire on both
 * occurrences of a repeated time (Vixie cron's rule).
 */
function cronJob(expression: string, timezone: string | undefined): Cron {
  return new Cron(expression, { mode: '5-part', fixedTimeRule: 'no-wildcard', ...(timezone ? { timezone } : {}) });
}

/**
 * Checks a 5-field cron expression (minute hour day-of-month month weekday,
 * weekday 0-6 with Sunday 0; digits and `* , - /` only) and returns it with
 * its fields separated by single spaces, or a message. `now` is the instant
 * from which it must match at least once.
 */
export function checkCronExpression(value: unknown, now: Date): { expression: string } | { message: string } {
  if (typeof value !== 'string')
    return { message: 'must be a string of 5 fields: minute hour day-of-month month weekday' };
  if (value.length > MAX_CRON_LENGTH) return { message: `must be at most ${MAX_CRON_LENGTH} characters` };
  const fields = value
    .trim()
    .split(/\s+/)
    .filter((f) => f.length > 0);
  if (fields.length === 1 && fields[0]?.startsWith('@')) {
    return { message: 'nicknames such as @daily are not accepted: write the 5 fields (e.g. 0 0 * * *)' };
  }
  if (fields.length !== 5) {
    return {
      message: `must have exactly 5 fields (minute hour day-of-month month weekday), got ${fields.length}`,
    };
  }
  // Every bad field named in the one message, not only the first.
  const problems = fields.map((field, i) => cronFieldProblem(CRON_FIELDS[i]!, field)).filter((p) => p !== undefined);
  if (problems.length > 0) return { message: problems.join('; ') };
  const expression = fields.join(' ');
  let job: Cron;
  try {
    job = cronJob(expression, undefined);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, '') : String(error);
    return { message: `is not a valid cron expression: ${reason}` };
  }
  let next: Date | null;
  try {
    next = Number.isNaN(now.getTime()) ? null : job.nextRun(now);
  } catch {
    next = null;
  }
  if (next === null) return { message: 'never matches a date (for example day 30 of month 2)' };
  return { expression };
}

const TIMEZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** An IANA time zone name the runtime knows (`UTC`, `Europe/Berlin`, `Etc/GMT+5`); offsets such as `+01:00` are refused. */
export function isTimezone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_TIMEZONE_LENGTH || !TIMEZONE_NAME.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * Reads an ISO 8601 date-time: `YYYY-MM-DDTHH:mm[:ss[.fff]]` then `Z`, an
 * offset `±HH:MM`, or nothing: a local time in `timezone`. A local time that
 * the clocks skip (daylight-saving gap) is refused; one that occurs twice is
 * the first occurrence (the earlier instant). Fractions past milliseconds are
 * truncated.
 */
export function parseDateTime(value: string, timezone: string): { instant: Date } | { message: string } {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) {
    return {
      message: 'must be an ISO 8601 date-time such as 2030-01-31T09:00:00Z (or without Z: local time in timezone)',
    };
  }
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12) return { message: `month ${m[2]} does not exist` };
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
  if (day < 1 || day > daysInMonth) return { message: `day ${m[3]} does not exist in month ${m[2]} of ${m[1]}` };
  if (hour > 23 || minute > 59 || second > 59)
    return { message: `time ${m[4]}:${m[5]}:${m[6] ?? '00'} does not exist` };
  const wall = utc(year, month, day, hour, minute, second);
  const zone = m[8];
  if (zone !== undefined) {
    if (zone.toUpperCase() === 'Z') return { instant: new Date(wall + ms) };
    const sign = zone.startsWith('-') ? -1 : 1;
    const offsetHours = Number(zone.slice(1, 3));
    const offsetMinutes = Number(zone.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) return { message: `offset ${zone} does not exist` };
    return { instant: new Date(wall - sign * (offsetHours * 60 + offsetMinutes) * 60_000 + ms) };
  }
  const instant = localToInstant(wall, timezone);
  if (instant === undefined) {
    return { message: `${value} does not exist in ${timezone} (the clocks skip it for daylight saving)` };
  }
  return { instant: new Date(instant + ms) };
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Date.UTC without its two-digit-year quirk. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time in `timezone` at `instant` (whole seconds), written as if it were UTC. */
function wallClock(instant: number, timezone: string): number {
  let format = formatters.get(timezone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(instant)) parts[part.type] = part.value;
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
  return utc(
    year,
    Number(parts.month),
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
}

/**
 * The earliest instant whose wall-clock time in `timezone` is `wall` (a local
 * time written as UTC, whole seconds), or undefined in a daylight-saving gap.
 * The candidate offsets are those a day either side: no zone changes offset twice in two days.
 */
function localToInstant(wall: number, timezone: string): number | undefined {
  const day = 86_400_000;
  const offsets = new Set([-day, 0, day].map((shift) => wallClock(wall + shift, timezone) - (wall + shift)));
  const candidates = [...offsets].map((offset) => wall - offset).filter((t) => wallClock(t, timezone) === wall);
  return candidates.length ? Math.min(...candidates) : undefined;
}

/** The three forms of a scheduled trigger, defaults applied. */
export interface IntervalSchedule {
  scheduleType: 'interval';
  /** Seconds between due times, 1 to 366 days. */
  interval: number;
}
export interface CronSchedule {
  scheduleType: 'cron';
  cronExpression: string;
  timezone: string;
}
export interface OnceSchedule {
  scheduleType: 'once';
  /** The instant, as `toISOString()` writes it (UTC, milliseconds). */
  scheduledAt: string;
  timezone: string;
}
export type Schedule = IntervalSchedule | CronSchedule | OnceSchedule;

/**
 * The first due time strictly after `after`, or null when there is none.
 *
 * - interval: `after` + interval seconds. Pass the previous due time (not the
 *   time the run happened to start), so the schedule does not drift by each
 *   run's lateness; at creation pass the creation time.
 * - cron: croner's next match in the trigger's time zone, whole seconds
 *   (see {@link cronJob} for daylight saving).
 * - once: `scheduledAt` while it is after `after`, then null.
 *
 * `meta` must come from checkTriggerMetadata; `after` must be a valid Date (RangeError otherwise).
 */
export function nextScheduledTime(meta: Schedule, after: Date): Date | null {
  const from = after.getTime();
  if (Number.isNaN(from)) throw new RangeError('after must be a valid Date');
  switch (meta.scheduleType) {
    case 'interval':
      return new Date(from + meta.interval * 1000);
    case 'cron':
      return cronJob(meta.cronExpression, meta.timezone).nextRun(new Date(from));
    case 'once': {
      const at = new Date(meta.scheduledAt);
      return at.getTime() > from ? at : null;
    }
  }
}

/** What decides a schedule's due times, in any object that holds one (trigger metadata, an orchestration's trigger). */
interface ScheduleFields {
  readonly scheduleType?: unknown;
  readonly interval?: unknown;
  readonly cronExpression?: unknown;
  readonly scheduledAt?: unknown;
  readonly timezone?: unknown;
}

/**
 * Whether two schedules fire at the same times: the same type, interval, cron
 * expression, instant and time zone (UTC when absent). An update that leaves
 * them alone (a description, a parameter) keeps the next due time; one that
 * changes any of them reschedules. Undefined (no schedule) equals only undefined.
 */
export function sameSchedule(a: ScheduleFields | undefined, b: ScheduleFields | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const key = (s: ScheduleFields) =>
    JSON.stringify([
      s.scheduleType ?? null,
      s.interval ?? null,
      s.cronExpression ?? null,
      s.scheduledAt ?? null,
      s.timezone ?? 'UTC',
    ]);
  return key(a) === key(b);
}

/** What is wrong with one field of a cron expression, if anything. */
function cronFieldProblem(spec: (typeof CRON_FIELDS)[number], field: string): string | undefined {
  if (!/^[0-9*,/-]+$/.test(field)) {
    return `${spec.name} field "${field}" may use only digits and * , - / (names, ?, L, W and # are not accepted)`;
  }
  for (const item of field.split(',')) {
    const values = (item.split('/')[0] ?? '').match(/\d+/g) ?? [];
    for (const text of values) {
      const n = Number(text);
      if (spec.name === 'weekday' && n === 7) return 'weekday 7 is not accepted: weekdays are 0-6 with Sunday 0';
      if (n < spec.min || n > spec.max) return `${spec.name} ${text} is out of range ${spec.min}-${spec.max}`;
    }
  }
  return undefined;
}
