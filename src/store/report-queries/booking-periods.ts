// The bookings report's rows per local day or week (store/report-queries/bookings-rows.ts says what each
// figure counts): the bookings detected in the period and the slots that opened in it.
import { Prisma } from '../../generated/prisma/client.js';
import { BOOKING_DAY_FIGURES, computedBookingDays } from './booking-days.js';
import { bookingWeeks } from './booking-weeks.js';
import type { ReportScope } from './report-scope.js';
import { daysInOrder, reportDaysInOrder, withUnstoredFrom } from './stored-days.js';
import { firstRowsOnly, isoDay, type ReportDb } from './report-sql.js';

export interface PeriodRow {
  connection_id: string;
  connection: string;
  period: string;
  bookings: number;
  booked_minutes: number | null;
  median_lead_hours: number | null;
  mean_lead_hours: number | null;
  opened: number;
}

/**
 * The query's connections' bookings per local day or week (connection_id, connection, rank, period, bookings,
 * booked_minutes, median_lead_hours, mean_lead_hours, opened), for reports to list by periodsInOrder. Days come as
 * reportDaysInOrder reads them, weeks as bookingWeeks does (booking-weeks.ts), both in parts in the report's order
 * where stored days are read (days in no order where not `inOrder`, to be counted). Read as rows here, and as CSV by
 * the export (csv-rows.ts).
 */
export function bookingPeriods(query: ReportScope, by: 'day' | 'week', inOrder = true): Prisma.Sql {
  if (by === 'day') {
    const days = reportDaysInOrder(
      query,
      'booking_day',
      BOOKING_DAY_FIGURES,
      (afterStored) => computedBookingDays(query, afterStored),
      inOrder,
    );
    return Prisma.sql`
      SELECT d.connection_id, d.connection, d.rank, d.day AS period,
             d.bookings, d.booked_minutes, d.median_lead_hours, d.mean_lead_hours, d.opened
      FROM (${days}) d`;
  }
  return bookingWeeks(query);
}

/**
 * The order the bookings report lists bookingPeriods's rows (alias p) in: by connection (by name, then id, as
 * connectionsInOrder ranks them), then period, as daysInOrder lists days: weeks come the way days do.
 */
export const periodsInOrder = (query: ReportScope): Prisma.Sql => daysInOrder(query, 'p', 'period');

/** The query's periods as the report lists them (the first `firstRows` of them where that is given). */
export async function bookingsPerPeriod(
  prisma: ReportDb,
  query: ReportScope,
  by: 'day' | 'week',
  firstRows?: number,
): Promise<PeriodRow[]> {
  return prisma.$queryRaw<PeriodRow[]>(
    Prisma.sql`
      SELECT p.connection_id, p.connection, ${isoDay(Prisma.sql`p.period`)} AS period, p.bookings, p.booked_minutes, p.median_lead_hours,
             p.mean_lead_hours, p.opened
      FROM (${bookingPeriods(await withUnstoredFrom(prisma, query), by)}) p ${periodsInOrder(query)}
      ${firstRowsOnly(firstRows)}`,
  );
}
