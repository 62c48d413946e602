// Times as people read them: in a named zone ("Tue 24 Nov, 10:54 Europe/Berlin"), and relative to now
// ("3 minutes ago"). Pages never show a bare UTC ISO string; the zone is always named.
import { DateTime } from 'luxon';

/** "Tue 24 Nov 2026, 10:54 Europe/Berlin"; an unknown or missing zone falls back to UTC, named as such. */
export function localTime(date: Date, zone: string | null | undefined): string {
  let at = DateTime.fromJSDate(date, { zone: zone ?? 'UTC' });
  if (!at.isValid) at = DateTime.fromJSDate(date, { zone: 'UTC' });
  return `${at.toFormat('ccc d LLL yyyy, HH:mm')} ${at.zoneName === 'UTC' ? 'UTC' : at.zoneName}`;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "3 minutes ago", "in 2 hours", "just now" (under a minute either way). */
export function relativeTime(date: Date, now: Date): string {
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.trunc(seconds / size), unit);
  }
  return 'just now';
}
