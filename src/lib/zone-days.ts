// The dates of an account's zone and the instants they begin, computed here with luxon and nowhere else.
// Postgres is never handed a zone name that came from the upstream: a name ICU knows may be missing from the
// database's tzdata (US/Pacific-New on Postgres 15; Europe/Kyiv on an older one), and every query naming it
// would fail (issue 41). SQL gets the instants this returns, which mean the same to both.
import { DateTime, IANAZone } from 'luxon';

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

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** Offsets are remembered for these years only, where toISOString writes the plain YYYY-MM-DD. */
const FIRST_PLAIN_MS = Date.UTC(1000, 0, 2);
const LAST_PLAIN_MS = Date.UTC(9999, 11, 30);
const REMEMBERED_HOURS_LIMIT = 100_000;
/** Per zone, per UTC hour: the offset in minutes through that whole hour, or NaN when it changes within it. */
const offsetsByHour = new Map<string, Map<number, number>>();

/**
 * The zone's offset through the UTC hour of `ms`, when it holds through the whole hour. luxon asks Intl for every
 * offset (formatToParts, some 20 µs), and a sync asks for the date of every slot it sees, mostly of the same few
 * hundred hours; an offset is a pure function of the zone and the instant, so remembering it changes no answer.
 * Real zones change their offset at most once in an hour, so equal offsets at both ends mean no change within.
 */
function steadyOffsetOfHour(zone: string, ms: number): number {
  let hours = offsetsByHour.get(zone);
  if (hours === undefined) offsetsByHour.set(zone, (hours = new Map()));
  const hour = Math.floor(ms / HOUR_MS);
  const known = hours.get(hour);
  if (known !== undefined) return known;
  const iana = IANAZone.create(zone);
  const atStart = iana.offset(hour * HOUR_MS);
  const steady = atStart === iana.offset((hour + 1) * HOUR_MS) ? atStart : Number.NaN;
  if (hours.size >= REMEMBERED_HOURS_LIMIT) hours.clear();
  hours.set(hour, steady);
  return steady;
}

/**
 * The date (YYYY-MM-DD) `instant` falls on in `zone`, as luxon's DateTime.fromJSDate(instant, { zone }).toISODate()
 * gives it (null for a zone luxon does not know), without luxon's cost on the sync's per-slot paths.
 */
export function localDateOf(instant: Date, zone: string): string | null {
  const ms = instant.getTime();
  if (ms >= FIRST_PLAIN_MS && ms <= LAST_PLAIN_MS) {
    const offset = steadyOffsetOfHour(zone, ms);
    if (!Number.isNaN(offset)) return new Date(ms + offset * MINUTE_MS).toISOString().slice(0, 10);
  }
  return DateTime.fromJSDate(instant, { zone }).toISODate();
}

const REMEMBERED_DATES_LIMIT = 10_000;
const dateStarts = new Map<string, number>();

/**
 * When `date` (YYYY-MM-DD) begins in `zone`, in ms, as luxon's DateTime.fromISO(date, { zone }) has it (NaN for a
 * date or zone luxon refuses). Remembered: every call of a sync asks it of the same few dozen dates.
 */
export function startOfDateIn(date: string, zone: string): number {
  const key = `${zone} ${date}`;
  const known = dateStarts.get(key);
  if (known !== undefined) return known;
  const ms = DateTime.fromISO(date, { zone }).toMillis();
  if (dateStarts.size >= REMEMBERED_DATES_LIMIT) dateStarts.clear();
  dateStarts.set(key, ms);
  return ms;
}

/** The date `days` after `date` (YYYY-MM-DD; negative: before), counted on the calendar, not in any zone. */
export function dateAfter(date: string, days: number): string {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new RangeError(`"${date}" is not a date (YYYY-MM-DD)`);
  return new Date(ms + days * 86_400_000).toISOString().slice(0, 10);
}
