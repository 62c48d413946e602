import { DateTime } from 'luxon';
import { isIanaZoneName } from '../lib/iana-zone.js';

// Format checks are regexes (so we decide which ISO 8601 spellings pass, not luxon, which also takes week
// and ordinal dates); range checks are luxon's (so "2026-02-30" and "25:00" fail).

const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME_WITH_OFFSET =
  /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)$/;
const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$/;

/** YYYY-MM-DD naming a day that exists. */
export function isCalendarDate(value: string): boolean {
  return CALENDAR_DATE.test(value) && DateTime.fromISO(value, { zone: 'utc' }).isValid;
}

/**
 * The calendar date of an ISO date-time with Z or an offset, as written (not converted to any zone), or
 * undefined when the value is not such a date-time. The service writes overview dates in the overview's
 * time zone, so the written date part is the day it means.
 */
export function writtenDateOfDateTime(value: string): string | undefined {
  const m = DATE_TIME_WITH_OFFSET.exec(value);
  if (!m || !DateTime.fromISO(value, { setZone: true }).isValid) return undefined;
  return m[1];
}

/**
 * The instant as `YYYY-MM-DDTHH:mm:ss.sssZ`, for an ISO 8601 UTC timestamp ending in Z with or without
 * fractional seconds; undefined otherwise. Digits past milliseconds are dropped (slots start on minutes).
 */
export function normalisedUtcInstant(value: string): string | undefined {
  if (!UTC_INSTANT.test(value)) return undefined;
  const parsed = DateTime.fromISO(value, { zone: 'utc' });
  return parsed.isValid ? (parsed.toUTC().toISO() ?? undefined) : undefined;
}

/**
 * An IANA zone name the runtime knows. Offsets such as "+01:00" are refused although Intl accepts them:
 * they are not zones, and a fixed offset would silently ignore daylight saving.
 */
export function isIanaZone(value: string): boolean {
  return !/^[+-]/.test(value) && isIanaZoneName(value);
}
