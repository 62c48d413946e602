// What a report is asked: which report, which connections and event types, which local days, as of which
// instant, in which zone. The CLI and the admin pages both parse their raw strings here, so a bad value gets
// the same message from both; a ReportUsageError is the caller's mistake (exit code 2, HTTP 400).
import { DateTime, IANAZone } from 'luxon';
import {
  BOOKINGS_GROUPINGS,
  REPORT_NAMES,
  type BookingsGrouping,
  type ReportName,
  type ReportScope,
} from '../store/report-queries/report-scope.js';

export { BOOKINGS_GROUPINGS, REPORT_NAMES, type BookingsGrouping, type ReportName };

/** What the report store reads (connection, event type, days, instant, zone), and which report it is for. */
export interface ReportQuery extends ReportScope {
  report: ReportName;
  /** True when `at` was given (a past instant) rather than being now. */
  atGiven: boolean;
  /** bookings only. */
  by: BookingsGrouping;
}

/** The raw strings as a command line or a query string carries them. */
export interface RawReportQuery {
  connection?: string | undefined;
  event?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  at?: string | undefined;
  tz?: string | undefined;
  by?: string | undefined;
}

export class ReportUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportUsageError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// An instant must carry its offset: "as of 09:00" in an unstated zone would silently mean the server's.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/i;

export function isReportName(name: string): name is ReportName {
  return (REPORT_NAMES as readonly string[]).includes(name);
}

const blank = (value: string | undefined) => value === undefined || value.trim() === '';

function parseDay(value: string, flag: string): string {
  const trimmed = value.trim();
  if (!ISO_DATE.test(trimmed) || !DateTime.fromISO(trimmed, { zone: 'UTC' }).isValid) {
    throw new ReportUsageError(`${flag} "${value}" is not a date: give a day as YYYY-MM-DD, e.g. 2026-03-01`);
  }
  return trimmed;
}

function parseInstant(value: string): Date {
  const trimmed = value.trim();
  const parsed = DateTime.fromISO(trimmed, { setZone: true });
  if (!ISO_INSTANT.test(trimmed) || !parsed.isValid) {
    throw new ReportUsageError(
      `--at "${value}" is not an instant: give a date-time with its offset, e.g. 2026-03-01T12:00:00Z`,
    );
  }
  return parsed.toJSDate();
}

/** Validates the raw values; `now` is used when no `--at` is given. */
export function parseReportQuery(report: ReportName, raw: RawReportQuery, now: Date): ReportQuery {
  const query: ReportQuery = { report, at: now, atGiven: false, by: 'day' };
  if (!blank(raw.connection)) {
    const id = raw.connection!.trim();
    if (!UUID.test(id)) {
      throw new ReportUsageError(
        `--connection "${raw.connection}" is not a connection id: \`slotfeed connections list\` shows them`,
      );
    }
    query.connectionId = id;
  }
  if (!blank(raw.event)) {
    if (report === 'sync-health') {
      throw new ReportUsageError('sync-health is per connection: --event does not apply to it');
    }
    query.eventId = raw.event!.trim();
  }
  if (!blank(raw.from)) query.from = parseDay(raw.from!, '--from');
  if (!blank(raw.to)) query.to = parseDay(raw.to!, '--to');
  if (query.from !== undefined && query.to !== undefined && query.from > query.to) {
    throw new ReportUsageError(
      `--from ${query.from} is after --to ${query.to}: swap them, or leave one out for an open range`,
    );
  }
  if (!blank(raw.at)) {
    query.at = parseInstant(raw.at!);
    query.atGiven = true;
  }
  if (!blank(raw.tz)) {
    const zone = raw.tz!.trim();
    if (!IANAZone.isValidZone(zone)) {
      throw new ReportUsageError(
        `--tz "${raw.tz}" is not a time zone: give an IANA name such as Europe/Berlin or UTC`,
      );
    }
    query.timezone = zone;
  }
  if (!blank(raw.by)) {
    const by = raw.by!.trim();
    if (report !== 'bookings') throw new ReportUsageError(`--by applies to the bookings report only`);
    if (!(BOOKINGS_GROUPINGS as readonly string[]).includes(by)) {
      throw new ReportUsageError(`--by "${raw.by}": choose one of ${BOOKINGS_GROUPINGS.join(', ')}`);
    }
    query.by = by as BookingsGrouping;
  }
  return query;
}
