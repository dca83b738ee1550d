import { nextScheduledTime, type Schedule } from './schedule.js';

/**
 * The due time after an occurrence that fired at `now` (due at `due`): the first
 * occurrence strictly after `now`, so that after downtime the missed occurrences
 * are not fired in a burst (the one due fires, the others are skipped). Intervals
 * keep their phase: due + k × interval. Null when nothing is left (a `once`).
 */
export function nextDueAfter(schedule: Schedule, due: Date, now: Date): Date | null {
  if (schedule.scheduleType === 'interval') {
    const step = schedule.interval * 1000;
    const late = Math.max(0, now.getTime() - due.getTime());
    return new Date(due.getTime() + (Math.floor(late / step) + 1) * step);
  }
  return nextScheduledTime(schedule, now.getTime() > due.getTime() ? now : due);
}
