// The reports whose rows grow with connections × days (or bookings), shaped in SQL as the CSV the report would write
// (reports/report-format.ts, reportAsCsv of the report's rows), so that Postgres writes the CSV itself and it is
// streamed as it comes (csv-export.ts) instead of a year's rows being read into memory first: a year of
// 10,000 connections is 1.8 million utilization days (docs/performance.md). Each column is the report's own
// (utilization-report.ts, bookings-report.ts: the same keys, in the same order, rounded the same way), and
// test/reports/report-export.test.ts holds each such CSV to the one formatted from the report's rows, byte for
// byte, over every scope. A report or grouping not here (its rows few, or shaped in ways SQL would only copy
// approximately) is written from its rows.
import { Prisma } from '../../generated/prisma/client.js';
import { AVAILABILITY_IN_ORDER, availabilityWithNames } from './availability-rows.js';
import { bookingPeriods, periodsInOrder } from './booking-periods.js';
import { BOOKINGS_IN_ORDER, everyBooking } from './bookings-rows.js';
import type { BookingsGrouping, ReportName, ReportScope } from './report-scope.js';
import { daysInOrder } from './stored-days.js';
import { utilizationDays } from './utilization-rows.js';

/**
 * A float8 rounded as reports/report-result.ts's numberOrNull rounds it in JavaScript, Math.round(value × 10^d)
 * ÷ 10^d: halves up (Math.round's rule, where Postgres's round(float8) rounds them to even), as floor(x + 0.5).
 * The two agree on every double x but one, 0.5 − 2⁻⁵⁴, where x + 0.5 rounds up to 1, and on
 * none past 2⁵² (a figure of 45 billion minutes); `+ 0` makes a negative zero the 0 JavaScript prints. The
 * figures are sums of finite lengths, never infinite or NaN (which numberOrNull would print as nothing). Postgres
 * writes the result as JavaScript does: the shortest text that reads back as the same number (extra_float_digits
 * 1, report-session.ts). The CASE that would also handle that one double cost half a second on a year of 10,000
 * connections (three of these a row, 1.8 million rows); this costs a tenth of one.
 */
function roundedAsShown(value: Prisma.Sql, decimals: number): Prisma.Sql {
  const factor = Prisma.raw(String(10 ** decimals));
  return Prisma.sql`(floor((${value})::float8 * ${factor} + 0.5::float8) / ${factor} + 0)`;
}

/** numberOrNull(value, 2) ?? 0: a figure the report shows as 0 when there is none. */
const minutesShown = (value: Prisma.Sql) => Prisma.sql`COALESCE(${roundedAsShown(value, 2)}, 0)`;

/**
 * A name as reportAsCsv writes it: an empty one as an empty cell, as NULL is (COPY's CSV quotes an empty text,
 * "", to tell it from NULL; reportAsCsv writes both as nothing).
 */
const cellText = (value: Prisma.Sql) => Prisma.sql`NULLIF(${value}, '')`;

/** utilization-report.ts's rows: each day's minutes rounded to 2 decimals, its booked share to 4. */
function utilizationCsvRows(query: ReportScope): Prisma.Sql {
  const offered = Prisma.sql`u.offered_minutes`;
  const booked = Prisma.sql`u.booked_minutes`;
  return Prisma.sql`
    SELECT u.connection_id, ${cellText(Prisma.sql`u.connection`)} AS connection, u.day,
           ${minutesShown(offered)} AS offered_minutes, u.bookings, ${minutesShown(booked)} AS booked_minutes,
           CASE WHEN ${offered} > 0 THEN ${roundedAsShown(Prisma.sql`LEAST(1, ${booked} / ${offered})`, 4)} END AS share
    FROM (${utilizationDays(query)}) u
    ${daysInOrder(query, 'u')}`;
}

/** bookings-report.ts's rows by day or week: minutes and leads rounded to 2 decimals. */
function bookingPeriodsCsvRows(query: ReportScope, by: 'day' | 'week'): Prisma.Sql {
  return Prisma.sql`
    SELECT p.connection_id, ${cellText(Prisma.sql`p.connection`)} AS connection, p.period AS ${Prisma.raw(by)},
           p.bookings, ${minutesShown(Prisma.sql`p.booked_minutes`)} AS booked_minutes,
           ${roundedAsShown(Prisma.sql`p.median_lead_hours`, 2)} AS median_lead_hours,
           ${roundedAsShown(Prisma.sql`p.mean_lead_hours`, 2)} AS mean_lead_hours, p.opened
    FROM (${bookingPeriods(query, by)}) p
    ${periodsInOrder(query)}`;
}

/** A timestamptz(3) as its milliseconds since the epoch (numeric, exact), as a Date's getTime(). */
const epochMs = (instant: Prisma.Sql) => Prisma.sql`(extract(epoch FROM ${instant}) * 1000)`;

/** A timestamptz(3) as Date.toISOString() writes it: 2026-09-20T12:34:56.789Z. */
const isoInstant = (instant: Prisma.Sql) =>
  Prisma.sql`to_char(${instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * bookings-report.ts's rows by booking: its instants in UTC, its minutes and lead from their milliseconds (as the
 * report takes them from Dates), the lead rounded to 2 decimals, its event types joined by a space.
 */
function bookingCsvRows(query: ReportScope): Prisma.Sql {
  const startsMs = epochMs(Prisma.sql`e.starts_at`);
  return Prisma.sql`
    SELECT e.connection_id, ${cellText(Prisma.sql`e.connection`)} AS connection,
           ${isoInstant(Prisma.sql`e.starts_at`)} AS starts_at,
           (${epochMs(Prisma.sql`e.ends_at`)} - ${startsMs})::float8 / 60000 AS minutes,
           ${roundedAsShown(Prisma.sql`(${startsMs} - ${epochMs(Prisma.sql`e.detected_at`)})::float8 / 3600000`, 2)}
             AS lead_hours,
           ${cellText(Prisma.sql`array_to_string(e.event_ids, ' ')`)} AS event_ids,
           ${isoInstant(Prisma.sql`e.detected_at`)} AS detected_at, e.slots_closed
    FROM (${everyBooking(query)}) e
    ${BOOKINGS_IN_ORDER}`;
}

/** availability-report.ts's rows: an event type without a title at T by its id, minutes rounded to 2 decimals. */
function availabilityCsvRows(query: ReportScope): Prisma.Sql {
  return Prisma.sql`
    SELECT a.connection_id, ${cellText(Prisma.sql`a.connection`)} AS connection, a.event_id,
           ${cellText(Prisma.sql`COALESCE(a.event, a.event_id)`)} AS event, a.day, a.free_slots,
           ${roundedAsShown(Prisma.sql`a.free_minutes`, 2)} AS free_minutes
    FROM (${availabilityWithNames(query)}) a
    ${AVAILABILITY_IN_ORDER}`;
}

/** What a CSV export asks for: a report's scope, which report, and for bookings its grouping. */
export type CsvScope = ReportScope & {
  report: ReportName;
  by: BookingsGrouping;
};

/**
 * Whether the export reads the report in parts at once (export-parts.ts) where it spans many connections: where
 * Postgres's work per row is what bounds it. Availability works out each row's figures from its day's lists, a few
 * µs a row in Postgres; the others read stored rows that Node's reading of the COPY bounds, and read in parts they
 * took no less time and more of Node's CPU (docs/performance.md, "Availability exported in parts at once").
 */
export const readsInParts = (scope: CsvScope): boolean => scope.report === 'availability';

/** The report's CSV rows as one SELECT, in the report's order, or undefined when it is written from its rows. */
export function csvRows(scope: CsvScope): Prisma.Sql | undefined {
  if (scope.report === 'utilization') return utilizationCsvRows(scope);
  if (scope.report === 'availability') return availabilityCsvRows(scope);
  if (scope.report === 'bookings' && (scope.by === 'day' || scope.by === 'week')) {
    return bookingPeriodsCsvRows(scope, scope.by);
  }
  if (scope.report === 'bookings' && scope.by === 'booking') return bookingCsvRows(scope);
  return undefined;
}
