// Wall-clock ↔ instant conversion on top of luxon's IANA offsets. Hand-rolled instead of DateTime.fromObject
// because the slot rule converts thousands of candidates per overview and luxon objects made that ~50× slower.
// "Wall ms" is a local date-time encoded as if it were UTC (Date.UTC of its fields).
import { IANAZone } from 'luxon';

const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export function zoneNamed(name: string): IANAZone {
  return IANAZone.create(name);
}

// luxon asks Intl for every offset, the slot rule asks for the same day boundaries again on every overview and
// slots request, and a history of dozens of syncs (the demo's) made that the simulator's main cost. An offset
// is a pure function of the zone and the instant, so remembering it changes no answer. It is remembered per UTC
// hour, with whether the hour's last millisecond has the same offset as its first: such an hour has no change of
// offset in it (real zones change at most once in an hour), and every instant in it gets the remembered offset;
// an hour with a change asks luxon for each instant. Remembered by the exact instant before, it missed whenever
// "now" moved (every request of a history's rounds). Bounded: cleared when full.
const HOUR_MS = 3_600_000;
const OFFSET_CACHE_LIMIT = 100_000;
const offsetCaches = new Map<string, Map<number, { offset: number; steady: boolean }>>();

/** The zone's UTC offset in minutes at `ms` (as zone.offset). */
function offsetAt(zone: IANAZone, ms: number): number {
  let cache = offsetCaches.get(zone.name);
  if (cache === undefined) offsetCaches.set(zone.name, (cache = new Map()));
  const hour = Math.floor(ms / HOUR_MS);
  let known = cache.get(hour);
  if (known === undefined) {
    if (cache.size >= OFFSET_CACHE_LIMIT) cache.clear();
    const offset = zone.offset(hour * HOUR_MS);
    known = { offset, steady: zone.offset(hour * HOUR_MS + HOUR_MS - 1) === offset };
    cache.set(hour, known);
  }
  return known.steady ? known.offset : zone.offset(ms);
}

export interface WallInstant {
  ms: number;
  /** False when the wall time falls in a DST gap; ms is then where a clock lands (pushed forward). */
  exists: boolean;
}

/**
 * The instant of a local wall time. A repeated time (fall-back) resolves to the EARLIER instant, like Temporal's
 * 'compatible' disambiguation. Assumes no two offset changes within two days, which holds for real zones.
 */
export function wallToInstant(zone: IANAZone, wallMs: number): WallInstant {
  const before = offsetAt(zone, wallMs - DAY_MS);
  const after = offsetAt(zone, wallMs + DAY_MS);
  let best: number | null = null;
  for (const offset of before === after ? [before] : [before, after]) {
    const candidate = wallMs - offset * MINUTE_MS;
    if (candidate + offsetAt(zone, candidate) * MINUTE_MS === wallMs && (best === null || candidate < best)) {
      best = candidate;
    }
  }
  return best === null ? { ms: wallMs - before * MINUTE_MS, exists: false } : { ms: best, exists: true };
}

/**
 * Converter for the wall times of one local day (and the next, for ranges ending at 24:00). Days without an
 * offset change, nearly all of them, skip the per-call offset lookups, which are the expensive part.
 */
export function wallConverterForDay(zone: IANAZone, dayNumber: number): (wallMs: number) => WallInstant {
  const before = offsetAt(zone, (dayNumber - 1) * DAY_MS);
  const after = offsetAt(zone, (dayNumber + 3) * DAY_MS);
  if (before !== after) return (wallMs) => wallToInstant(zone, wallMs);
  return (wallMs) => ({ ms: wallMs - before * MINUTE_MS, exists: true });
}

/** Epoch day number (days since 1970-01-01) of a 'YYYY-MM-DD' date. */
export function dayNumberOf(isoDate: string): number {
  return Math.floor(Date.parse(`${isoDate}T00:00:00Z`) / DAY_MS);
}

// A day's date is asked for again by every request (its candidates' days, its guest dates): a few hundred days in
// all, each formatted once. Bounded: cleared when full.
const ISO_DATES_LIMIT = 100_000;
const isoDates = new Map<number, string>();

export function isoDateOfDay(dayNumber: number): string {
  let date = isoDates.get(dayNumber);
  if (date === undefined) {
    if (isoDates.size >= ISO_DATES_LIMIT) isoDates.clear();
    date = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
    isoDates.set(dayNumber, date);
  }
  return date;
}

/** Local calendar day number of an instant in a zone. */
export function localDayNumber(zone: IANAZone, ms: number): number {
  return Math.floor((ms + offsetAt(zone, ms) * MINUTE_MS) / DAY_MS);
}

/** Index into mon…sun of a day number (1970-01-01 was a Thursday). */
export function weekdayIndexOfDay(dayNumber: number): number {
  return (((dayNumber + 3) % 7) + 7) % 7;
}
