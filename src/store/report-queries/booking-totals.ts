// The bookings report's totals (bookings, booked minutes, median and mean lead) and its heat map (bookings by the
// weekday and hour their time starts), which every grouping of the report shows beside its rows, kept as running
// totals (issue 43). Counted from the bookings, they read every booking of the range: a year of 10,000
// connections' 6.2 million, 12.6-15 s. The retention run now stores, for each connection and local day with a
// booking, what its bookings came to from its first stored day through that day (booking_total_day: counts and
// millisecond sums, which add up, and histograms of the leads and of the start cells, lib/log-histogram.ts), so a
// range of days is the total at its last less the total before its first: two rows a connection, whatever the
// range. The days after the stored ones (today's) are counted from their bookings, as before. Counts, sums, the
// mean and the heat map are exact; the median too up to EXACT_MEDIAN_UP_TO bookings, and past that it is read back
// from the leads' log buckets, within RELATIVE_ERROR (1 %) of percentile_cont's.
import { Prisma } from '../../generated/prisma/client.js';
import { encodeHistograms, histogramOf, HistogramSums } from '../../lib/log-histogram.js';
import { bookingsAfterDay } from './booking-weeks.js';
import type { ReportScope } from './report-scope.js';
import { STORED_ZONE } from './stored-days.js';
import {
  at,
  bookedWhere,
  connectionFilter,
  localDay,
  WORKED_OUT_ONCE,
  zoneOf,
  type ReportDb,
} from './report-sql.js';

/** The heat map's cells: bookings by the ISO weekday (1 = Monday) and hour their time starts, in the zone. */
export interface WeekdayHourCell {
  weekday: number;
  hour: number;
  bookings: number;
}

/** The totals every grouping of the bookings report shows (null figures: no booking). */
export interface BookingTotals {
  bookings: number;
  booked_minutes: number | null;
  median_lead_hours: number | null;
  mean_lead_hours: number | null;
}

/** A start cell's key in the 'start' histogram: (weekday - 1) * 24 + hour, 0-167, over a local timestamp. */
const startCellOf = (local: Prisma.Sql) =>
  Prisma.sql`((date_part('isodow', ${local}) - 1) * 24 + date_part('hour', ${local}))::int`;

/** The weekday and hour of a start cell's key (startCellOf). */
const weekdayHourOf = (key: number) => ({ weekday: Math.floor(key / 24) + 1, hour: key % 24 });

/** The histograms' names: the leads in seconds by log bucket, and the bookings by start cell. */
const LEAD = 'lead';
const START = 'start';

/** What bookings came to, counted in SQL over a relation `b` of bookings (JOIN connection c), as a query returns it. */
interface CountedBookings {
  bookings: number;
  booked_ms: number | null;
  lead_ms: number | null;
  /** Each booking's lead in seconds, and its start cell: counted into the histograms here. */
  leads: number[] | null;
  starts: number[] | null;
}

/** CountedBookings's columns over `b` and `c`, to group as the caller does. */
const countedColumns = (query: ReportScope) => Prisma.sql`COUNT(*)::int AS bookings,
  SUM(round(date_part('epoch', b.ends_at - b.starts_at) * 1000))::float8 AS booked_ms,
  SUM(round(date_part('epoch', b.starts_at - b.detected_at) * 1000))::float8 AS lead_ms,
  array_agg(date_part('epoch', b.starts_at - b.detected_at)) AS leads,
  array_agg(${startCellOf(Prisma.sql`(b.starts_at AT TIME ZONE ${zoneOf(query)})`)}) AS starts`;

/**
 * The last day of a connection's running totals a report reads (aliases `s`, its report_days_stored row
 * LEFT JOINed, and `c`): the day before T's, or booking_totals_through if earlier. NULL, so none, when they were
 * stored in another zone than the connection's own, or none are.
 */
const lastTotalsDay = (query: ReportScope) =>
  Prisma.sql`CASE WHEN s.zone = ${STORED_ZONE} AND s.booking_totals_through IS NOT NULL
    THEN LEAST(s.booking_totals_through, ${localDay(query, at(query))} - 1) END`;

/** A stored running total as a report reads it, with the sign it counts with. */
interface StoredTotalRow {
  sign: number;
  bookings: number;
  booked_ms: number;
  lead_ms: number;
  histograms: Uint8Array;
}

/**
 * Each connection's running totals a range reads: the one at the range's last stored day (+1), and where --from
 * starts it, the one before it (−1); none for a connection whose stored days all lie before --from.
 */
function storedTotalRows(query: ReportScope): Prisma.Sql {
  // NULL where the connection has none to read: LEAST would pass over a NULL last_day and read rows stored in another
  // zone, or before a move, as --to's.
  const last = Prisma.sql`CASE WHEN l.last_day IS NOT NULL
    THEN LEAST(l.last_day ${query.to === undefined ? Prisma.empty : Prisma.sql`, ${query.to}::date`}) END`;
  const totalThrough = (sign: number, through: Prisma.Sql) => Prisma.sql`
    SELECT ${sign}::int AS sign, t.bookings, t.booked_ms::float8 AS booked_ms, t.lead_ms::float8 AS lead_ms, t.histograms
    FROM l CROSS JOIN LATERAL (
      SELECT t.bookings, t.booked_ms, t.lead_ms, t.histograms FROM booking_total_day t
      WHERE t.connection_id = l.id AND t.day <= ${through}
      ORDER BY t.day DESC LIMIT 1
    ) t
    WHERE ${last} IS NOT NULL ${query.from === undefined ? Prisma.empty : Prisma.sql`AND ${last} >= ${query.from}::date`}`;
  return Prisma.sql`
    WITH l AS (
      SELECT c.id, ${lastTotalsDay(query)} AS last_day
      FROM connection c LEFT JOIN report_days_stored s ON s.connection_id = c.id
      WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
      ${WORKED_OUT_ONCE}
    )
    ${totalThrough(1, last)}
    ${query.from === undefined ? Prisma.empty : Prisma.sql`UNION ALL ${totalThrough(-1, Prisma.sql`${query.from}::date - 1`)}`}`;
}

/** Adds counted bookings to the sums: their counts, and each lead and start cell into its histogram. */
function addCounted(
  sums: HistogramSums,
  into: { bookings: number; bookedMs: number; leadMs: number },
  counted: CountedBookings,
) {
  into.bookings += counted.bookings;
  into.bookedMs += counted.booked_ms ?? 0;
  into.leadMs += counted.lead_ms ?? 0;
  for (const lead of counted.leads ?? []) sums.addValue(LEAD, lead);
  for (const cell of counted.starts ?? []) sums.addKey(START, cell);
}

/**
 * Up to this many bookings in a report's range, its median lead is worked out exactly from them (a one-connection
 * report reads its own few hundred by its index); past it, from the stored histograms, within RELATIVE_ERROR. A
 * hundred thousand leads take Postgres some tens of milliseconds to sort.
 */
export const EXACT_MEDIAN_UP_TO = 100_000;

/** The exact median lead, in hours, of the bookings a query keeps (percentile_cont, as a period's). */
async function exactMedianLeadHours(db: ReportDb, query: ReportScope): Promise<number | null> {
  const [row] = await db.$queryRaw<{ median: number | null }[]>(Prisma.sql`
    SELECT (percentile_cont(0.5) WITHIN GROUP (ORDER BY date_part('epoch', b.starts_at - b.detected_at))
            / 3600)::float8 AS median
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}`);
  return row?.median ?? null;
}

/**
 * The heat map's cells and the totals of a report that reads stored days (readsStoredDays): each connection's stored
 * running totals over the range, and its bookings after them counted; the median lead exact up to `exactMedianUpTo`
 * bookings.
 */
export async function storedCellsAndTotals(
  db: ReportDb,
  query: ReportScope,
  exactMedianUpTo = EXACT_MEDIAN_UP_TO,
): Promise<{ cells: WeekdayHourCell[]; totals: BookingTotals }> {
  const [stored, [after]] = await Promise.all([
    db.$queryRaw<StoredTotalRow[]>(storedTotalRows(query)),
    db.$queryRaw<CountedBookings[]>(Prisma.sql`
      SELECT ${countedColumns(query)}
      FROM ${bookingsAfterDay(query, lastTotalsDay(query))} JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)}`),
  ]);
  const sums = new HistogramSums();
  const sum = { bookings: 0, bookedMs: 0, leadMs: 0 };
  for (const row of stored) {
    const sign = row.sign < 0 ? -1 : 1;
    sum.bookings += sign * row.bookings;
    sum.bookedMs += sign * row.booked_ms;
    sum.leadMs += sign * row.lead_ms;
    sums.addBytes(row.histograms, sign);
  }
  if (after !== undefined) addCounted(sums, sum, after);
  const cells = sums.buckets(START).map(([key, bookings]) => ({ ...weekdayHourOf(key), bookings }));
  if (sum.bookings === 0)
    return {
      cells,
      totals: { bookings: 0, booked_minutes: null, median_lead_hours: null, mean_lead_hours: null },
    };
  const [median] = sums.percentiles(LEAD, [0.5]);
  return {
    cells,
    totals: {
      bookings: sum.bookings,
      booked_minutes: sum.bookedMs / 60_000,
      median_lead_hours:
        sum.bookings <= exactMedianUpTo
          ? await exactMedianLeadHours(db, query)
          : median === null || median === undefined
            ? null
            : median / 3600,
      mean_lead_hours: sum.leadMs / sum.bookings / 3_600_000,
    },
  };
}

/**
 * Stores the running totals of the days of `query`'s batch (claimed, and marked stored in their zone) after each
 * one's booking_totals_through and up to `through` (over alias `c`), and marks how far they go; `fresh`: those
 * with none stored (new, or moved to another zone), which start again from their first booking. The number of rows
 * stored.
 */
export async function storeBookingTotals(
  db: ReportDb & { $executeRaw: (query: Prisma.Sql) => Promise<number> },
  query: ReportScope & { connectionBatch: readonly string[] },
  fresh: readonly string[],
  through: Prisma.Sql,
): Promise<number> {
  const ids = query.connectionBatch;
  if (fresh.length > 0)
    await db.$executeRaw(
      Prisma.sql`DELETE FROM booking_total_day WHERE connection_id = ANY(${fresh}::uuid[])`,
    );
  const [latest, days] = await Promise.all([
    db.$queryRaw<(Omit<StoredTotalRow, 'sign'> & { connection_id: string })[]>(Prisma.sql`
      SELECT DISTINCT ON (t.connection_id) t.connection_id::text AS connection_id, t.bookings,
             t.booked_ms::float8 AS booked_ms, t.lead_ms::float8 AS lead_ms, t.histograms
      FROM booking_total_day t JOIN report_days_stored s ON s.connection_id = t.connection_id
      WHERE t.connection_id = ANY(${ids}::uuid[]) AND s.booking_totals_through IS NOT NULL
      ORDER BY t.connection_id, t.day DESC`),
    db.$queryRaw<(CountedBookings & { connection_id: string; day: string })[]>(Prisma.sql`
      SELECT b.connection_id::text AS connection_id, ${localDay(query, Prisma.sql`b.detected_at`)}::text AS day,
             ${countedColumns(query)}
      FROM ${bookingsAfterDay(query, Prisma.sql`s.booking_totals_through`)} JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)} AND ${localDay(query, Prisma.sql`b.detected_at`)} <= ${through}
      GROUP BY 1, 2 ORDER BY 1, 2`),
  ]);
  // Each connection's running total, from its last stored row, carried through its days in order.
  const running = new Map<
    string,
    { sums: HistogramSums; total: { bookings: number; bookedMs: number; leadMs: number } }
  >();
  for (const row of latest) {
    const sums = new HistogramSums();
    sums.addBytes(row.histograms);
    running.set(row.connection_id, {
      sums,
      total: { bookings: row.bookings, bookedMs: row.booked_ms, leadMs: row.lead_ms },
    });
  }
  const rows = days.map((day) => {
    let carried = running.get(day.connection_id);
    if (carried === undefined) {
      carried = { sums: new HistogramSums(), total: { bookings: 0, bookedMs: 0, leadMs: 0 } };
      running.set(day.connection_id, carried);
    }
    addCounted(carried.sums, carried.total, day);
    const histograms = new Map([LEAD, START].map((name) => [name, histogramOf(carried.sums.buckets(name))]));
    // Encoded now: the sums go on adding up for the connection's later days.
    return {
      connectionId: day.connection_id,
      day: day.day,
      ...carried.total,
      hex: Buffer.from(encodeHistograms(histograms)).toString('hex'),
    };
  });
  // The rows and how far they go, in one statement: a batch with no booking still moves its mark.
  await db.$executeRaw(Prisma.sql`
    WITH stored AS (
      INSERT INTO booking_total_day (connection_id, day, bookings, booked_ms, lead_ms, histograms)
      SELECT r.connection_id, r.day, r.bookings, r.booked_ms, r.lead_ms, decode(r.hex, 'hex')
      FROM unnest(${rows.map((r) => r.connectionId)}::uuid[], ${rows.map((r) => r.day)}::date[],
                  ${rows.map((r) => r.bookings)}::int[], ${rows.map((r) => r.bookedMs)}::float8[]::int8[],
                  ${rows.map((r) => r.leadMs)}::float8[]::int8[], ${rows.map((r) => r.hex)}::text[])
        AS r(connection_id, day, bookings, booked_ms, lead_ms, hex)
      ON CONFLICT (connection_id, day) DO UPDATE SET bookings = EXCLUDED.bookings, booked_ms = EXCLUDED.booked_ms,
        lead_ms = EXCLUDED.lead_ms, histograms = EXCLUDED.histograms
    )
    UPDATE report_days_stored s SET booking_totals_through = c.through
    FROM (SELECT c.id, ${through} AS through FROM connection c WHERE c.id = ANY(${ids}::uuid[])) c
    WHERE s.connection_id = c.id`);
  return rows.length;
}
