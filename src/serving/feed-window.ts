// A feed's window: from the start of today in the account's zone, a number of calendar days. The window's
// first day is part of the render cache key and of Last-Modified: it moves at local midnight with no write.
import { DateTime } from 'luxon';
import { isIanaZoneName } from '../lib/iana-zone.js';

export interface FeedWindow {
  windowStart: Date;
  windowEnd: Date;
  /** The window's first date, 'YYYY-MM-DD' in the connection's zone. */
  windowKey: string;
}

/**
 * From the start of today in the zone (UTC when unknown or invalid) to the same local time `days` later: days
 * are calendar days, so a window across a DST change is 23 or 25 hours longer than days × 24 h … or shorter.
 */
function computeFeedWindow(now: Date, zone: string | null, days: number): FeedWindow & { dayEnd: number } {
  const zoneName = zone && isIanaZoneName(zone) ? zone : 'UTC';
  const start = DateTime.fromJSDate(now, { zone: zoneName }).startOf('day');
  return {
    windowStart: start.toJSDate(),
    windowEnd: start.plus({ days }).toJSDate(),
    windowKey: start.toISODate() ?? now.toISOString().slice(0, 10),
    dayEnd: start.plus({ days: 1 }).toMillis(),
  };
}

// Every feed request needs its window, and luxon's zone arithmetic costs more than the rest of a cached
// request: a window holds until its local day ends.
const MAX_REMEMBERED_WINDOWS = 1_000;
const windows = new Map<string, FeedWindow & { dayEnd: number }>();

export function feedWindow(now: Date, zone: string | null, days: number): FeedWindow {
  const key = `${zone ?? ''}\u0000${days}`;
  const at = now.getTime();
  let window = windows.get(key);
  if (window === undefined || at < window.windowStart.getTime() || at >= window.dayEnd) {
    if (windows.size >= MAX_REMEMBERED_WINDOWS) windows.clear();
    window = computeFeedWindow(now, zone, days);
    windows.set(key, window);
  }
  const { windowStart, windowEnd, windowKey } = window;
  return { windowStart, windowEnd, windowKey };
}
