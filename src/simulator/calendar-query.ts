// Validation of the calendar endpoints' query strings. The service description only says "400 Bad Request";
// these are the cases we reject, each with a message that names the parameter.
import { DateTime } from 'luxon';
import { isIanaZoneName } from '../lib/iana-zone.js';
import { calendarDateMs } from '../lib/zone-days.js';

export interface OverviewQuery {
  startDate: string;
  /** Exclusive end date of the range, start_date + period. */
  endDate: string;
  timezone: string;
}

export interface SlotsQuery {
  date: string;
  timezone: string;
}

export type QueryResult<T> = { ok: true; value: T } | { ok: false; message: string };

const PERIOD_PATTERN = /^([0-9]+)([dwm])$/;
const DEFAULT_PERIOD = '1m';

type RawQuery = Record<string, unknown>;

function singleString(query: RawQuery, name: string): string | undefined | { error: string } {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return { error: `${name} must be given once` };
  return value;
}

function parseDate(query: RawQuery, name: string): QueryResult<string> {
  const value = singleString(query, name);
  if (value === undefined || value === '') return { ok: false, message: `${name} is required` };
  if (typeof value !== 'string') return { ok: false, message: value.error };
  // A YYYY-MM-DD that exists on the calendar (not '2026-02-30'); calendarDateMs reads it without luxon, whose
  // parse was a tenth of the simulator's time in the demo's history.
  if (calendarDateMs(value) === undefined) {
    return { ok: false, message: `${name} must be a calendar date YYYY-MM-DD` };
  }
  return { ok: true, value };
}

function parseZone(query: RawQuery): QueryResult<string> {
  const value = singleString(query, 'timezone');
  if (value === undefined || value === '') return { ok: false, message: 'timezone is required' };
  if (typeof value !== 'string') return { ok: false, message: value.error };
  if (!isIanaZoneName(value)) return { ok: false, message: 'timezone must be an IANA time zone' };
  return { ok: true, value };
}

/** The period must stay strictly below two calendar months: from Jan 1, 8w and 58d pass but 59d (= Mar 1) and 2m do not. */
function parsePeriodEnd(startDate: string, raw: string | undefined): QueryResult<string> {
  const match = PERIOD_PATTERN.exec(raw ?? DEFAULT_PERIOD);
  if (!match) return { ok: false, message: 'period must match ^[0-9]+[dwm]$' };
  const amount = Number(match[1]);
  if (!Number.isSafeInteger(amount) || amount === 0) return { ok: false, message: 'period must be positive' };
  if (amount > 1000) return { ok: false, message: 'period must be below 2 months' };
  const start = DateTime.fromISO(startDate, { zone: 'utc' });
  const unit = match[2] === 'd' ? 'days' : match[2] === 'w' ? 'weeks' : 'months';
  const end = start.plus({ [unit]: amount });
  if (end >= start.plus({ months: 2 })) return { ok: false, message: 'period must be below 2 months' };
  return { ok: true, value: end.toISODate() ?? startDate };
}

export function parseOverviewQuery(query: RawQuery): QueryResult<OverviewQuery> {
  const startDate = parseDate(query, 'start_date');
  if (!startDate.ok) return startDate;
  const timezone = parseZone(query);
  if (!timezone.ok) return timezone;
  const period = singleString(query, 'period');
  if (typeof period === 'object') return { ok: false, message: period.error };
  const endDate = parsePeriodEnd(startDate.value, period);
  if (!endDate.ok) return endDate;
  return {
    ok: true,
    value: { startDate: startDate.value, endDate: endDate.value, timezone: timezone.value },
  };
}

export function parseSlotsQuery(query: RawQuery): QueryResult<SlotsQuery> {
  const date = parseDate(query, 'date');
  if (!date.ok) return date;
  const timezone = parseZone(query);
  if (!timezone.ok) return timezone;
  return { ok: true, value: { date: date.value, timezone: timezone.value } };
}
