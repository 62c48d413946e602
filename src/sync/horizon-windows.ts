// Which overview requests cover the sync horizon. The API caps an overview's `period` below two calendar months;
// a period of at most 58 days is below two months from any start date (the shortest two-month span, from
// 31 December, is 59 days), so windows are measured in days and capped there.
import { DateTime } from 'luxon';
import { datesFrom, localDateOf } from '../lib/zone-days.js';

export const MAX_WINDOW_DAYS = 58;

export interface OverviewWindow {
  /** First date of the window, YYYY-MM-DD in the connection's zone. */
  startDate: string;
  days: number;
  /** The API's `period` parameter, e.g. "28d". */
  period: string;
}

export interface Horizon {
  /** Dates in the connection's zone, first inclusive, last inclusive. */
  firstDate: string;
  lastDate: string;
  dates: string[];
}

/**
 * The horizon of `days` dates starting today in `zone`. Only today's date needs the zone; the dates after it are
 * calendar dates, counted on without asking luxon each (a sync's horizon is read at every pull: luxon's zone
 * arithmetic per date was a few per cent of a no-change sync's CPU).
 */
export function horizonFrom(now: Date, zone: string, days: number): Horizon {
  const today = localDateOf(now, zone);
  const dates = today !== null ? datesFrom(today, days) : luxonDates(now, zone, days);
  return { firstDate: dates[0] as string, lastDate: dates[dates.length - 1] as string, dates };
}

/** The same, for a zone lib/zone-days.ts does not read, as luxon reads it. */
function luxonDates(now: Date, zone: string, days: number): string[] {
  const start = DateTime.fromJSDate(now, { zone }).startOf('day');
  return Array.from({ length: days }, (_, i) => start.plus({ days: i }).toISODate() as string);
}

/** The fewest windows of at most `maxWindowDays` that cover the horizon, in order. */
export function windowsCovering(horizon: Horizon, maxWindowDays = MAX_WINDOW_DAYS): OverviewWindow[] {
  if (!Number.isInteger(maxWindowDays) || maxWindowDays < 1 || maxWindowDays > MAX_WINDOW_DAYS) {
    throw new RangeError(`window length must be 1–${MAX_WINDOW_DAYS} days, got ${maxWindowDays}`);
  }
  const windows: OverviewWindow[] = [];
  for (let i = 0; i < horizon.dates.length; i += maxWindowDays) {
    const days = Math.min(maxWindowDays, horizon.dates.length - i);
    windows.push({ startDate: horizon.dates[i] as string, days, period: `${days}d` });
  }
  return windows;
}
