// Payload drift. All but invalidShape and zoneNotAsked are shapes the service description allows for or the
// service is known to send, so a client must accept them: months "declared with format number" but typed
// string; first/last available dates "format date-time" (with the zone's offset, in UTC, or as wall-clock
// time without an offset) instead of plain dates; a null first date (the description types only the last
// as nullable, but the service sends null for the first too). invalidShape is truly invalid, and
// zoneNotAsked labels the overview with a zone other than the one asked for: a client must reject both
// rather than store them.
import { DateTime } from 'luxon';
import type { Prng } from './prng.js';
import type { DriftVariant, FaultSettings } from './types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Each drift flag of FaultSettings and the variant it turns on, in the order they are applied. */
export const DRIFT_FLAG_VARIANTS = {
  monthsAsStrings: 'monthsAsStrings',
  firstAvailableNull: 'firstAvailableNull',
  firstAvailableAsDateTime: 'firstAvailableAsDateTime',
  datesInUtc: 'datesInUtc',
  datesWithoutOffset: 'datesWithoutOffset',
  zoneNotAsked: 'zoneNotAsked',
  invalidShapes: 'invalidShape',
} as const satisfies Record<keyof FaultSettings['drift'], DriftVariant>;

/** Which drift variants change anything on this endpoint. */
export function driftApplies(variant: DriftVariant, endpoint: string): boolean {
  if (variant === 'invalidShape') return endpoint !== 'POST /oauth2/token';
  return endpoint === 'GET /calendars/{event_id}';
}

function availabilityOf(payload: unknown): Json | null {
  return isObject(payload) && isObject(payload.availability) ? payload.availability : null;
}

function monthsAsStrings(payload: unknown): unknown {
  const disabled = availabilityOf(payload)?.disabled_dates;
  if (isObject(disabled) && Array.isArray(disabled.months)) disabled.months = disabled.months.map(String);
  return payload;
}

function firstAvailableNull(payload: unknown): unknown {
  const availability = availabilityOf(payload);
  if (availability) availability.first_available_date = null;
  return payload;
}

const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Rewrites the plain first/last dates as date-times for midnight in the overview's zone. A value that is
 * already a date-time (another spelling variant got there first) is left alone.
 */
function respellDates(payload: unknown, spell: (midnight: DateTime) => string | null): unknown {
  const availability = availabilityOf(payload);
  if (!availability || !isObject(payload) || typeof payload.timezone !== 'string') return payload;
  for (const field of ['first_available_date', 'last_available_date'] as const) {
    const value = availability[field];
    if (typeof value === 'string' && CALENDAR_DATE.test(value)) {
      availability[field] = spell(DateTime.fromISO(value, { zone: payload.timezone }));
    }
  }
  return payload;
}

// "2026-03-05T00:00:00+01:00"
const withZoneOffset = (midnight: DateTime) => midnight.toISO({ suppressMilliseconds: true });
// "2026-03-04T23:00:00Z": Berlin midnight as a UTC instant, whose written date is the day before.
const inUtc = (midnight: DateTime) => midnight.toUTC().toISO({ suppressMilliseconds: true });
// "2026-03-05T00:00:00": wall-clock time in the overview's zone.
const withoutOffset = (midnight: DateTime) =>
  midnight.toISO({ suppressMilliseconds: true, includeOffset: false });

/** A service that ignores the zone asked for; only the label changes, which is all a client can check. */
function zoneNotAsked(payload: unknown): unknown {
  if (!isObject(payload) || typeof payload.timezone !== 'string') return payload;
  payload.timezone = payload.timezone === 'UTC' ? 'Pacific/Kiritimati' : 'UTC';
  return payload;
}

const RESHAPES: Record<Exclude<DriftVariant, 'invalidShape'>, (payload: unknown) => unknown> = {
  monthsAsStrings,
  firstAvailableNull,
  firstAvailableAsDateTime: (p) => respellDates(p, withZoneOffset),
  datesInUtc: (p) => respellDates(p, inUtc),
  datesWithoutOffset: (p) => respellDates(p, withoutOffset),
  zoneNotAsked,
};

const INVALID_SHAPES: Record<string, ((payload: unknown) => unknown)[]> = {
  'GET /events': [
    (p) => ({ events: p }),
    (p) => {
      const first: unknown = Array.isArray(p) ? p[0] : undefined;
      if (isObject(first)) first.duration_minutes = `${String(first.duration_minutes)}min`;
      return Array.isArray(p) && p.length > 0 ? p : { events: p };
    },
    (p) => (Array.isArray(p) ? p.map((e: unknown) => (isObject(e) ? { ...e, enabled: 'yes' } : e)) : p),
  ],
  'GET /users/me': [
    (p) => (isObject(p) ? { ...p, notification_settings: 'email' } : p),
    (p) => (isObject(p) ? { ...p, email: null } : p),
    (p) => (isObject(p) ? { ...p, timezone: 60 } : p),
  ],
  'GET /calendars/{event_id}': [
    (p) => (isObject(p) ? { ...p, availability: null } : p),
    (p) => {
      const a = isObject(p) ? p.availability : null;
      if (isObject(a) && Array.isArray(a.available_dates)) a.available_dates = a.available_dates.join(',');
      return p;
    },
    (p) => {
      const a = isObject(p) ? p.availability : null;
      if (isObject(a)) a.weekly = { week_days: ['mon', 'tue'] };
      return p;
    },
    (p) => {
      const d = isObject(p) && isObject(p.availability) ? p.availability.disabled_dates : null;
      if (isObject(d)) d.months = ['August'];
      return p;
    },
  ],
  'GET /calendars/{event_id}/slots': [
    (p) => (isObject(p) && isObject(p.slot_list) ? { ...p, slot_list: Object.keys(p.slot_list) } : p),
    (p) => {
      if (!isObject(p) || !isObject(p.slot_list)) return p;
      const keys = Object.keys(p.slot_list);
      // Wall-clock times without a date or zone: not instants. An empty day still gets one bad key.
      const bad = (keys.length > 0 ? keys : ['2026-01-01T09:00:00Z']).map((k) => k.slice(11, 16));
      return { ...p, slot_list: Object.fromEntries(bad.map((k) => [k, {}])) };
    },
    (p) =>
      isObject(p) && isObject(p.slot_list) ? { ...p, slot_list: { 'not-a-time': { taken: false } } } : p,
  ],
};

/** Applies the variants in order to a fresh copy of the payload. */
export function driftPayload(
  payload: unknown,
  variants: DriftVariant[],
  endpoint: string,
  prng: Prng,
): unknown {
  let out: unknown = structuredClone(payload);
  for (const variant of variants) {
    if (!driftApplies(variant, endpoint)) continue;
    if (variant !== 'invalidShape') out = RESHAPES[variant](out);
    else {
      const shapes = INVALID_SHAPES[endpoint];
      if (shapes && shapes.length > 0) out = prng.pick(shapes)(out);
    }
  }
  return out;
}
