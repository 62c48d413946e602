// The dates of an account's zone and the instants they begin, computed here with luxon and nowhere else.
// Postgres is never handed a zone name that came from the upstream: a name ICU knows may be missing from the
// database's tzdata (US/Pacific-New on Postgres 15; Europe/Kyiv on an older one), and every query naming it
// would fail (issue 41). SQL gets the instants this returns, which mean the same to both.
import { DateTime } from 'luxon';

export interface ZoneDay {
  /** YYYY-MM-DD in the zone. */
  date: string;
  /** When the date begins (its first instant: midnight, or the hour after it on a day DST skips midnight). */
  startsAt: Date;
}

/** The dates in `zone` that [from, until) touches, in order, each with the instant it begins. */
export function zoneDaysBetween(zone: string, from: Date, until: Date): ZoneDay[] {
  let day = DateTime.fromJSDate(from, { zone }).startOf('day');
  if (!day.isValid) throw new RangeError(`"${zone}" is not a time zone luxon knows`);
  const days: ZoneDay[] = [];
  for (; day.toMillis() < until.getTime(); day = day.plus({ days: 1 }).startOf('day')) {
    days.push({ date: day.toISODate()!, startsAt: day.toJSDate() });
  }
  return days;
}
