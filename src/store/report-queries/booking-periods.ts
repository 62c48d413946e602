// The bookings report's rows per local day or week (store/report-queries/bookings-rows.ts says what each
// figure counts): the bookings detected in the period and the slots that opened in it.
import { Prisma } from '../../generated/prisma/client.js';
import { BOOKED_FIGURES_SQL, BOOKING_DAY_FIGURES, computedBookingDays } from './booking-days.js';
import type { ReportScope } from './report-scope.js';
import {
  daysInOrder,
  readsStoredDays,
  reportDaysInOrder,
  storedDays,
  withUnstoredFrom,
} from './stored-days.js';
import { bookedWhere, connectionsInOrder, localDay, zoneOf, type ReportDb } from './report-sql.js';

const detectedAt = Prisma.sql`b.detected_at`;

function period(query: ReportScope, by: 'day' | 'week', instant: Prisma.Sql): Prisma.Sql {
  return by === 'week'
    ? Prisma.sql`date_trunc('week', (${instant}) AT TIME ZONE ${zoneOf(query)})::date`
    : localDay(query, instant);
}

export interface PeriodRow {
  connection_id: string;
  connection: string;
  period: Date | string;
  bookings: number;
  booked_minutes: number | null;
  median_lead_hours: number | null;
  mean_lead_hours: number | null;
  opened: number;
}

/**
 * The query's connections' bookings per local day or week (connection_id, connection, rank, period, bookings,
 * booked_minutes, median_lead_hours, mean_lead_hours, opened), for reports to list by periodsInOrder. Days come as
 * reportDaysInOrder reads them (connection_id a uuid, so that Postgres sees their order); weeks unordered, with
 * connection_id as text. Read as rows here, and as CSV by the export (csv-rows.ts).
 */
export function bookingPeriods(query: ReportScope, by: 'day' | 'week'): Prisma.Sql {
  if (by === 'day') {
    const days = reportDaysInOrder(query, 'booking_day', BOOKING_DAY_FIGURES, (afterStored) =>
      computedBookingDays(query, afterStored),
    );
    return Prisma.sql`
      SELECT d.connection_id, d.connection, d.rank, d.day AS period,
             d.bookings, d.booked_minutes, d.median_lead_hours, d.mean_lead_hours, d.opened
      FROM (${days}) d`;
  }
  const bookingDays = readsStoredDays(query)
    ? Prisma.sql`(${storedDays(query, 'booking_day', BOOKING_DAY_FIGURES)})
                 UNION ALL (${computedBookingDays(query, true)})`
    : computedBookingDays(query, false);
  // A week's median lead is over its bookings, so weeks read those; their opened slots are their days', added up.
  return Prisma.sql`
    WITH booked AS (
      SELECT b.connection_id, ${period(query, by, detectedAt)} AS period, ${BOOKED_FIGURES_SQL}
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)}
      GROUP BY 1, 2
    ), opened AS (
      SELECT d.connection_id, date_trunc('week', d.day::timestamp)::date AS period, SUM(d.opened)::int AS opened
      FROM (${bookingDays}) d WHERE d.opened > 0 GROUP BY 1, 2
    )
    SELECT COALESCE(b.connection_id, o.connection_id)::text AS connection_id, c.connection, c.rank,
           COALESCE(b.period, o.period) AS period, COALESCE(b.bookings, 0) AS bookings, b.booked_minutes,
           b.median_lead_hours, b.mean_lead_hours, COALESCE(o.opened, 0) AS opened
    FROM booked b FULL JOIN opened o ON o.connection_id = b.connection_id AND o.period = b.period
    JOIN ${connectionsInOrder(query)} c ON c.id = COALESCE(b.connection_id, o.connection_id)`;
}

/**
 * The order the bookings report lists bookingPeriods's rows (alias p) in: by connection (by name, then id, as
 * connectionsInOrder ranks them), then period. Days as daysInOrder lists them; weeks by rank, a number, rather than
 * by the name's text: sorting a year of 10,000 connections' rows by their names' text took most of the report's time.
 */
export const periodsInOrder = (query: ReportScope, by: 'day' | 'week'): Prisma.Sql =>
  by === 'day' ? daysInOrder(query, 'p', 'period') : Prisma.sql`ORDER BY p.rank, p.period`;

export async function bookingsPerPeriod(
  prisma: ReportDb,
  query: ReportScope,
  by: 'day' | 'week',
): Promise<PeriodRow[]> {
  return prisma.$queryRaw<PeriodRow[]>(
    Prisma.sql`
      SELECT p.connection_id, p.connection, p.period, p.bookings, p.booked_minutes, p.median_lead_hours,
             p.mean_lead_hours, p.opened
      FROM (${bookingPeriods(await withUnstoredFrom(prisma, query), by)}) p ${periodsInOrder(query, by)}`,
  );
}
