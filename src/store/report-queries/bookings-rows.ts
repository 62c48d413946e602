// bookings' rows: bookings inferred from the snapshots, per local day or week, with their duration and lead time;
// the slots that appeared (newly opened time) in the same periods; and when the booked time lies (weekday ×
// hour, the admin's heat map).
//
// Semantics:
// - A booking is a row of the booking table: a maximal interval that became unavailable in one sync, made of
//   the slots that sync closed as `taken` (of every event type, merged where they overlap) less what a slot
//   still open after the sync covers. One booking that removed slots of three event types is one booking.
//   Slots closed because their event type was disabled or removed, or because they started, are not bookings.
//   "Inferred": an owner who removes working hours makes time vanish the same way; the snapshots cannot tell
//   these apart. Counted once detected_at ≤ T (the history as of --at/now).
// - --event keeps the bookings that closed a slot of that event type.
// - It falls in the period (day, or ISO week starting Monday) of detected_at, the sync that first saw it:
//   the booking happened between that sync and the one before. Lead time = starts_at − detected_at, in hours
//   (a lower bound of the real lead, by at most one sync interval); duration = ends_at − starts_at.
// - Opened = slot rows first seen in the period, excluding the connection's first successful sync (that
//   snapshot holds time that was already open when slotfeed started watching, not newly opened time). A slot
//   freed again after a cancellation counts as opened once more.
// - Weekday and hour are those of the booked slot's start; 1 = Monday … 7 = Sunday. All in the connection's
//   zone unless --tz.
import { Prisma } from '../../generated/prisma/client.js';
import { bookingPeriods, bookingsPerPeriod, type PeriodRow } from './booking-periods.js';
import {
  startCellOf,
  storedCellsAndTotals,
  type BookingTotals,
  type WeekdayHourCell,
} from './booking-totals.js';
import { readsStoredDays, withUnstoredFrom } from './stored-days.js';
import { onTheSameConnection, type BesideRead } from './report-session.js';
import type { BookingsGrouping, ReportScope } from './report-scope.js';
import { bookedWhere, connectionsInOrder, WORKED_OUT_ONCE, zoneOf, type ReportDb } from './report-sql.js';

export type { PeriodRow } from './booking-periods.js';
export type { BookingTotals, WeekdayHourCell } from './booking-totals.js';

export interface BookingRow {
  connection_id: string;
  connection: string;
  detected_at: Date;
  starts_at: Date;
  ends_at: Date;
  event_ids: string[];
  slots_closed: number;
}

/**
 * Every booking of the query, one row each (connection_id as text, connection, rank, detected_at, starts_at,
 * ends_at, event_ids, slots_closed, id), unordered: reports list them by BOOKINGS_IN_ORDER. Read as rows here, and
 * as CSV by the export (csv-rows.ts).
 */
export function everyBooking(query: ReportScope): Prisma.Sql {
  return Prisma.sql`
    SELECT b.connection_id::text AS connection_id, o.connection, o.rank, b.detected_at, b.starts_at, b.ends_at,
           b.event_ids, b.slots_closed, b.id
    FROM booking b JOIN connection c ON c.id = b.connection_id
    JOIN ${connectionsInOrder(query)} o ON o.id = b.connection_id
    WHERE ${bookedWhere(query)}`;
}

/** The order everyBooking's rows (alias e) are listed in: by connection (its rank), then start. */
export const BOOKINGS_IN_ORDER = Prisma.sql`ORDER BY e.rank, e.starts_at, e.id`;

/**
 * The first `firstRows` bookings in BOOKINGS_IN_ORDER, read connection by connection in rank order: a connection's
 * bookings are a few hundred a year, so a page of a thousand reads a few connections' and stops, where ordering every
 * booking by rank sorted all of them (6.2 million over 10,000 connections' year) to keep a thousand. Each part keeps
 * Postgres to that plan: the connections worked out once in rank order (WORKED_OUT_ONCE keeps their order known to
 * the join above), and each one's bookings a subquery of its own (its LIMIT keeps it from being merged into a join of
 * every booking), so that the join comes out in rank order and only each connection's rows are sorted, one
 * connection after another, until there are enough.
 */
function firstBookings(query: ReportScope, firstRows: number): Prisma.Sql {
  return Prisma.sql`
    SELECT e.connection_id, o.connection, e.detected_at, e.starts_at, e.ends_at, e.event_ids, e.slots_closed
    FROM (SELECT r.* FROM ${connectionsInOrder(query)} r ORDER BY r.rank ${WORKED_OUT_ONCE}) o
    CROSS JOIN LATERAL (
      SELECT b.connection_id::text AS connection_id, b.detected_at, b.starts_at, b.ends_at, b.event_ids,
             b.slots_closed, b.id
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE b.connection_id = o.id AND ${bookedWhere(query)}
      ORDER BY b.starts_at, b.id
      LIMIT ${firstRows}
    ) e
    ORDER BY o.rank, e.starts_at, e.id
    LIMIT ${firstRows}`;
}

/**
 * Every booking, one row each: when it was seen, when it lies, how long it is, how far ahead it was made. The
 * first `firstRows` of them where that is given.
 */
async function eachBooking(prisma: ReportDb, query: ReportScope, firstRows?: number): Promise<BookingRow[]> {
  if (firstRows !== undefined) return prisma.$queryRaw<BookingRow[]>(firstBookings(query, firstRows));
  return prisma.$queryRaw<BookingRow[]>(Prisma.sql`
    SELECT e.connection_id, e.connection, e.detected_at, e.starts_at, e.ends_at, e.event_ids, e.slots_closed
    FROM (${everyBooking(query)}) e
    ${BOOKINGS_IN_ORDER}`);
}

/**
 * The heat map's cells over `local`, the start of each booking in its zone (grouped by its first two columns): the
 * weekday and hour of its start cell, as the stored totals count them (startCellOf).
 */
const cellsOf = (local: Prisma.Sql) =>
  Prisma.sql`${startCellOf(local)} / 24 + 1 AS weekday, ${startCellOf(local)} % 24 AS hour, COUNT(*)::int AS bookings`;

export async function bookingsByWeekdayHour(
  prisma: ReportDb,
  query: ReportScope,
): Promise<WeekdayHourCell[]> {
  // Its totals are not shown: no exact median worked out for them.
  if (readsStoredDays(query))
    return (await storedCellsAndTotals(prisma, query, { exactMedianUpTo: 0 })).cells;
  return prisma.$queryRaw<WeekdayHourCell[]>(Prisma.sql`
    SELECT ${cellsOf(Prisma.sql`(b.starts_at AT TIME ZONE ${zoneOf(query)})`)}
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}
    GROUP BY 1, 2 ORDER BY 1, 2`);
}

const NO_TOTALS: BookingTotals = {
  bookings: 0,
  booked_minutes: null,
  median_lead_hours: null,
  mean_lead_hours: null,
};

/**
 * The heat map's cells and the totals: from the stored running totals and the bookings after them where the report
 * reads stored days (booking-totals.ts), else from one reading of the bookings.
 */
function cellsAndTotals(
  prisma: ReportDb,
  query: ReportScope,
): Promise<{ cells: WeekdayHourCell[]; totals: BookingTotals }> {
  return readsStoredDays(query) ? storedCellsAndTotals(prisma, query) : countedCellsAndTotals(prisma, query);
}

/**
 * The heat map's cells and the totals from one reading of the bookings: read once and kept for both (a month of
 * 10,000 connections' bookings took 1.8-2.2 s read twice, 1.35-1.5 s once, under the same load), where the totals'
 * median kept the second reading from running in parallel anyway. The totals come last, as the row without a cell.
 * Seconds, weekdays and hours as float8 (date_part), not EXTRACT's numeric: the median sorts half a million of
 * them for a month of those bookings, and numerics sort and add several times slower. A lead of days differs from
 * EXTRACT's by one bit of a float8 at most (under 5e-10 s for leads of weeks), far below the hundredth of an hour
 * it is shown to.
 */
export async function countedCellsAndTotals(
  prisma: ReportDb,
  query: ReportScope,
): Promise<{ cells: WeekdayHourCell[]; totals: BookingTotals }> {
  const rows = await prisma.$queryRaw<(WeekdayHourCell & Omit<BookingTotals, 'bookings'>)[]>(Prisma.sql`
    WITH read AS MATERIALIZED (
      SELECT (b.starts_at AT TIME ZONE ${zoneOf(query)}) AS local_start,
             date_part('epoch', b.starts_at - b.detected_at) AS lead_seconds,
             date_part('epoch', b.ends_at - b.starts_at) AS booked_seconds
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)}
    )
    SELECT ${cellsOf(Prisma.sql`local_start`)}, NULL::float8 AS booked_minutes, NULL::float8 AS median_lead_hours,
           NULL::float8 AS mean_lead_hours
    FROM read GROUP BY 1, 2
    UNION ALL
    SELECT NULL, NULL, COUNT(*)::int, (SUM(booked_seconds) / 60)::float8,
           (percentile_cont(0.5) WITHIN GROUP (ORDER BY lead_seconds) / 3600)::float8,
           (AVG(lead_seconds) / 3600)::float8
    FROM read
    ORDER BY 1, 2`);
  const cells = rows
    .filter((row) => row.weekday !== null)
    .map(({ weekday, hour, bookings }) => ({ weekday, hour, bookings }));
  const total = rows.find((row) => row.weekday === null);
  return {
    cells,
    totals: total
      ? {
          bookings: total.bookings,
          booked_minutes: total.booked_minutes,
          median_lead_hours: total.median_lead_hours,
          mean_lead_hours: total.mean_lead_hours,
        }
      : NO_TOTALS,
  };
}

/**
 * Where only the first rows are read (the admin page's table, `firstRows`): how many rows the report has, and the
 * slots they opened (its summary's figure that no stored total holds).
 */
export interface RowsCounted {
  rows: number;
  opened: number;
}

/**
 * What the bookings report reads for a grouping: the heat map's cells and the totals, and its rows (only the first
 * `firstRows` of them where the scope says so, with `counted`).
 */
export type BookingsRows = { cells: WeekdayHourCell[]; totals: BookingTotals; counted?: RowsCounted } & (
  | { by: 'weekday-hour' }
  | { by: 'booking'; bookings: BookingRow[] }
  | { by: 'day' | 'week'; periods: PeriodRow[] }
);

/** How many rows the bookings report by day or week has, and the slots they opened. */
async function countedPeriods(db: ReportDb, query: ReportScope, by: 'day' | 'week'): Promise<RowsCounted> {
  const [counted] = await db.$queryRaw<RowsCounted[]>(Prisma.sql`
    SELECT COUNT(*)::float8 AS rows, COALESCE(SUM(p.opened), 0)::float8 AS opened
    FROM (${bookingPeriods(await withUnstoredFrom(db, query), by, false)}) p`);
  return counted ?? { rows: 0, opened: 0 };
}

/**
 * The heat map and totals read beside the rows (`beside`: a second connection in the report's snapshot, where one
 * can be had): both read every booking of the range, and a month of 10,000 connections' took ~1.5 s each, one
 * after the other.
 */
export async function bookingsRows(
  prisma: ReportDb,
  query: ReportScope & { by: BookingsGrouping; firstRows?: number },
  beside: BesideRead = onTheSameConnection(prisma),
): Promise<BookingsRows> {
  const { by, firstRows } = query;
  if (by === 'weekday-hour') return { by, ...(await cellsAndTotals(prisma, query)) };
  const { answer: summary } = await beside((db) => cellsAndTotals(db, query));
  if (by === 'booking') {
    const bookings = await eachBooking(prisma, query, firstRows);
    const read = await summary;
    // A row a booking: the totals' count of bookings is the row count (the same bookings, bookedWhere's).
    const counted = firstRows === undefined ? {} : { counted: { rows: read.totals.bookings, opened: 0 } };
    return { by, ...read, ...counted, bookings };
  }
  // Counted beside the rows too: over every connection for a year, millions of rows of which a page lists a
  // thousand.
  const counted =
    firstRows === undefined ? undefined : (await beside((db) => countedPeriods(db, query, by))).answer;
  const whole = async () => ({ ...(await summary), ...(counted ? { counted: await counted } : {}) });
  const periods = await bookingsPerPeriod(prisma, query, by, firstRows);
  return { by, ...(await whole()), periods };
}
