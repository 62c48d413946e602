// A time as people read it, in a named zone: "Tue 24 Nov 2026, 10:54 Europe/Berlin". The one format for an
// instant shown to a person, on the pages and in the reports alike; never a bare UTC ISO string.
import { DateTime } from 'luxon';

/** "Tue 24 Nov 2026, 10:54 Europe/Berlin"; an unknown or missing zone falls back to UTC, named as such. */
export function localTime(date: Date, zone: string | null | undefined): string {
  let at = DateTime.fromJSDate(date, { zone: zone ?? 'UTC' });
  if (!at.isValid) at = DateTime.fromJSDate(date, { zone: 'UTC' });
  return `${at.toFormat('ccc d LLL yyyy, HH:mm')} ${at.zoneName === 'UTC' ? 'UTC' : at.zoneName}`;
}
