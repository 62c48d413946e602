// Payload drift. The first two variants are shapes the service description itself allows for (months "declared
// with format number" but typed string; first_available_date "format date-time"), so a client must accept them.
// invalidShape is truly invalid and a client must reject it rather than store it.
import { DateTime } from 'luxon';
import type { Prng } from './prng.js';
import type { DriftVariant } from './types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Which drift variants change anything on this endpoint. */
export function driftApplies(variant: DriftVariant, endpoint: string): boolean {
  if (variant === 'invalidShape') return endpoint !== 'POST /oauth2/token';
  return endpoint === 'GET /calendars/{event_id}';
}

function monthsAsStrings(payload: unknown): unknown {
  const disabled =
    isObject(payload) && isObject(payload.availability) ? payload.availability.disabled_dates : null;
  if (isObject(disabled) && Array.isArray(disabled.months)) disabled.months = disabled.months.map(String);
  return payload;
}

function datesAsDateTimes(payload: unknown): unknown {
  if (!isObject(payload) || !isObject(payload.availability) || typeof payload.timezone !== 'string')
    return payload;
  const availability = payload.availability;
  const zone = payload.timezone;
  for (const field of ['first_available_date', 'last_available_date'] as const) {
    const value = availability[field];
    if (typeof value === 'string') {
      availability[field] = DateTime.fromISO(value, { zone }).toISO({ suppressMilliseconds: true });
    }
  }
  return payload;
}

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
    if (variant === 'monthsAsStrings') out = monthsAsStrings(out);
    else if (variant === 'firstAvailableAsDateTime') out = datesAsDateTimes(out);
    else {
      const shapes = INVALID_SHAPES[endpoint];
      if (shapes && shapes.length > 0) out = prng.pick(shapes)(out);
    }
  }
  return out;
}
