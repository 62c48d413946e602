import { DateTime } from 'luxon';
import { isIanaZoneName } from '../lib/iana-zone.js';
import { calendarDateMs } from '../lib/zone-days.js';

// Format checks are regexes (so we decide which ISO 8601 spellings pass, not luxon, which also takes week
// and ordinal dates); range checks are luxon's (so "2026-02-30" and "25:00" fail), but for a plain date and the
// per-slot UTC instant, whose day of the month is checked against Date's (isCalendarDate, normalisedUtcInstant).

// The offset is optional: the service's overview dates are declared "date-time" and come with Z, with an
// offset, or as bare wall-clock times in the overview's zone.
const DATE_TIME =
  /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/;
const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$/;

/** YYYY-MM-DD naming a day that exists (without luxon, which cost a few per cent of a no-change sync's CPU). */
export const isCalendarDate = (value: string): boolean => calendarDateMs(value) !== undefined;

/**
 * The calendar date a date or ISO date-time names in `zone`, or undefined when the value is neither (or
 * `zone` is not a zone). A date is that date; a date-time with Z or an offset is an instant, read in `zone`
 * (Berlin midnight sent as "2026-03-04T23:00:00Z" is 5 March); a date-time without an offset is a wall-clock
 * time in `zone`, so its written date.
 */
export function calendarDateIn(value: string, zone: string): string | undefined {
  if (isCalendarDate(value)) return value;
  if (!DATE_TIME.test(value)) return undefined;
  // setZone: false (the default) converts an instant with an offset into `zone`; a value without one is
  // taken as local time in `zone` and keeps its date.
  const parsed = DateTime.fromISO(value, { zone });
  return parsed.isValid ? (parsed.toISODate() ?? undefined) : undefined;
}

/**
 * The instant as `YYYY-MM-DDTHH:mm:ss.sssZ`, for an ISO 8601 UTC timestamp ending in Z with or without
 * fractional seconds; undefined otherwise. Digits past milliseconds are dropped (slots start on minutes).
 */
export function normalisedUtcInstant(value: string): string | undefined {
  if (!UTC_INSTANT.test(value)) return undefined;
  // The format is the regex's; the range left to check is the day of the month, since Date.parse rolls
  // 2026-02-30 over into March where luxon refuses it. Date rather than luxon: this runs for every slot.
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  const normalised = new Date(ms).toISOString();
  return normalised.slice(0, 10) === value.slice(0, 10) ? normalised : undefined;
}

/**
 * An IANA zone name the runtime knows. Offsets such as "+01:00" are refused although Intl accepts them:
 * they are not zones, and a fixed offset would silently ignore daylight saving.
 */
export function isIanaZone(value: string): boolean {
  return !/^[+-]/.test(value) && isIanaZoneName(value);
}

/**
 * Whether two IANA names mean one zone: the same name, or names Intl resolves to one canonical zone
 * (aliases such as Asia/Calcutta and Asia/Kolkata, or a different letter case), which share every rule.
 */
export function isSameZone(a: string, b: string): boolean {
  if (a === b) return true;
  if (!isIanaZone(a) || !isIanaZone(b)) return false;
  const canonical = (zone: string) =>
    new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;
  return canonical(a) === canonical(b);
}
