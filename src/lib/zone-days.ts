// The dates of an account's zone and the instants they begin, computed here and nowhere else, on luxon's offsets.
// Postgres is never handed a zone name that came from the upstream: a name ICU knows may be missing from the
// database's tzdata (US/Pacific-New on Postgres 15; Europe/Kyiv on an older one), and every query naming it
// would fail (issue 41). SQL gets the instants this returns, which mean the same to both.
import { DateTime, IANAZone } from 'luxon';

export interface ZoneDay {
  /** YYYY-MM-DD in the zone. */
  date: string;
  /**
   * When the date begins: its first instant, midnight, or the first instant after it on a day DST skips midnight
   * (the earlier midnight where DST repeats it).
   */
  startsAt: Date;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** Offsets are remembered for these years only, where toISOString writes the plain YYYY-MM-DD. */
const FIRST_PLAIN_MS = Date.UTC(1000, 0, 2);
const LAST_PLAIN_MS = Date.UTC(9999, 11, 30);
/** Across every zone: all are forgotten at once when full, so that no zone name can grow it without bound. */
const REMEMBERED_HOURS_LIMIT = 100_000;
/** Per zone, per UTC hour: the offset in minutes through that whole hour, or NaN when it changes within it. */
const offsetsByHour = new Map<string, Map<number, number>>();
let rememberedHours = 0;

/**
 * The zone's offset through the UTC hour of `ms`, when it holds through the whole hour. luxon asks Intl for every
 * offset (formatToParts, some 20 µs), and a sync asks for the date of every slot it sees, mostly of the same few
 * hundred hours; an offset is a pure function of the zone and the instant, so remembering it changes no answer.
 * Real zones change their offset at most once in an hour, so equal offsets at both ends mean no change within.
 */
function steadyOffsetOfHour(zone: string, ms: number): number {
  let hours = offsetsByHour.get(zone);
  const hour = Math.floor(ms / HOUR_MS);
  const known = hours?.get(hour);
  if (known !== undefined) return known;
  const iana = IANAZone.create(zone);
  const atStart = iana.offset(hour * HOUR_MS);
  const steady = atStart === iana.offset((hour + 1) * HOUR_MS) ? atStart : Number.NaN;
  if (rememberedHours >= REMEMBERED_HOURS_LIMIT) {
    offsetsByHour.clear();
    rememberedHours = 0;
    hours = undefined;
  }
  if (hours === undefined) offsetsByHour.set(zone, (hours = new Map()));
  hours.set(hour, steady);
  rememberedHours++;
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
 * The first instant of `date` (YYYY-MM-DD) in `zone`, in ms, NaN for a zone luxon does not know. Midnight is at
 * one of the offsets the zone has a day either side of it: the earlier of those instants that is on the date. Where
 * DST skips midnight neither is, and the first instant is the change itself. Not luxon's DateTime.fromISO: at a
 * repeated midnight it picks by the offset of the day it is asked on. Remembered: a sync asks it of the same dates.
 */
export function startOfDateIn(date: string, zone: string): number {
  const key = `${zone} ${date}`;
  const known = dateStarts.get(key);
  if (known !== undefined) return known;
  const midnight = Date.parse(`${dateAfter(date, 0)}T00:00:00Z`);
  const iana = IANAZone.create(zone);
  const onDate = (ms: number) => localDateOf(new Date(ms), zone) === date;
  const candidates = [iana.offset(midnight - DAY_MS), iana.offset(midnight + DAY_MS)]
    .map((offset) => midnight - offset * MINUTE_MS)
    .filter((ms) => !Number.isNaN(ms));
  let first = Math.min(...candidates.filter(onDate));
  if (first === Infinity && candidates.length > 0) {
    // Midnight skipped: the date begins where the earlier candidate's minute first falls on it.
    let before = Math.min(...candidates);
    let after = Math.max(...candidates) + HOUR_MS;
    while (after - before > 1) {
      const middle = Math.floor((before + after) / 2);
      if (onDate(middle) || localDateOf(new Date(middle), zone)! > date) after = middle;
      else before = middle;
    }
    first = after;
  }
  const starts = Number.isFinite(first) ? first : Number.NaN;
  if (dateStarts.size >= REMEMBERED_DATES_LIMIT) dateStarts.clear();
  dateStarts.set(key, starts);
  return starts;
}

/** The dates in `zone` that [from, until) touches, in order, each with the instant it begins. */
export function zoneDaysBetween(zone: string, from: Date, until: Date): ZoneDay[] {
  const firstDate = localDateOf(from, zone);
  if (firstDate === null) throw new RangeError(`"${zone}" is not a time zone luxon knows`);
  const days: ZoneDay[] = [];
  for (let date = firstDate; ; date = dateAfter(date, 1)) {
    const startsAt = startOfDateIn(date, zone);
    if (Number.isNaN(startsAt)) throw new RangeError(`${date} has no first instant in "${zone}"`);
    if (startsAt >= until.getTime()) return days;
    days.push({ date, startsAt: new Date(startsAt) });
  }
}

/**
 * Midnight UTC of `date` (YYYY-MM-DD) in ms, or undefined when it is not a date that exists: Date.parse rolls
 * 2026-02-30 over into March, so the day must read back as written.
 */
export function calendarDateMs(date: string): number | undefined {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : Number.NaN;
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== date ? undefined : ms;
}

const dateOfMs = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The date `days` after `date` (YYYY-MM-DD; negative: before), counted on the calendar, not in any zone. */
export function dateAfter(date: string, days: number): string {
  return datesFrom(date, 1, days)[0]!;
}

/** `count` successive dates, the first `skip` days after `date` (YYYY-MM-DD), counted on the calendar. */
export function datesFrom(date: string, count: number, skip = 0): string[] {
  const ms = calendarDateMs(date);
  // A date that does not exist is refused like one misspelt.
  if (ms === undefined) throw new RangeError(`"${date}" is not a date (YYYY-MM-DD)`);
  return Array.from({ length: count }, (_, i) => dateOfMs(ms + (skip + i) * DAY_MS));
}
