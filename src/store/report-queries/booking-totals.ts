// The bookings report's totals (bookings, booked minutes, median and mean lead) and its heat map (bookings by the
// weekday and hour their time starts), which every grouping of the report shows beside its rows, kept as running
// totals (issue 43). Counted from the bookings, they read every booking of the range: a year of 10,000
// connections' 6.2 million, 12.6-15 s. The retention run now stores, for each connection and local day with a
// booking, what its bookings came to from its first stored day through that day (booking_total_day: counts and
// millisecond sums, which add up, and histograms of the leads and of the start cells, lib/log-histogram.ts), so a
// range of days is the total at its last less the total before its first: two rows a connection, whatever the
// range. The days after the stored ones (today's) are counted from their bookings, grouped in SQL by lead bucket and
// start cell, so that however many there are (a report --at a year back, every connection before its first run
// after the migration) a few hundred rows come back. Counts, sums, the
// mean and the heat map are exact; the median too up to EXACT_MEDIAN_UP_TO bookings, and past that it is read back
// from the leads' log buckets, within RELATIVE_ERROR (1 %) of percentile_cont's.
import { Prisma } from '../../generated/prisma/client.js';
import { encodeHistograms, histogramOf, HistogramSums, RATIO, SMALLEST } from '../../lib/log-histogram.js';
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

/** A start cell's key in the 'start' histogram: (ISO weekday - 1) * 24 + hour, 0-167, over a local timestamp. */
export const startCellOf = (local: Prisma.Sql) =>
  Prisma.sql`((date_part('isodow', ${local}) - 1) * 24 + date_part('hour', ${local}))::int`;

/** The weekday and hour of a start cell's key (startCellOf). */
const weekdayHourOf = (key: number) => ({ weekday: Math.floor(key / 24) + 1, hour: key % 24 });

/**
 * The 'lead' histogram's bucket of a lead of `seconds`, in SQL: bucketKey's formula (lib/log-histogram.ts) with its
 * constants, so that leads Postgres counts fall in the buckets JavaScript puts them in
 * (test/reports/booking-totals-migration.test.ts holds the two to each other).
 */
export const leadBucketOf = (seconds: Prisma.Sql) =>
  Prisma.sql`CASE WHEN ${seconds} >= ${SMALLEST}::float8
    THEN 1 + ceil(ln(${seconds} / ${SMALLEST}::float8) / ln(${RATIO}::float8))::int ELSE 0 END`;

/** The histograms' names: the leads in seconds by log bucket, and the bookings by start cell. */
const LEAD = 'lead';
const START = 'start';

/**
 * What bookings came to, a row a group (connection and day, where counted by day): their count and millisecond sums
 * (name NULL), and their count in each bucket of a histogram (name, key).
 */
interface CountedRow {
  connection_id: string | null;
  day: string | null;
  name: typeof LEAD | typeof START | null;
  key: number | null;
  bookings: number;
  booked_ms: number | null;
  lead_ms: number | null;
}

/**
 * The bookings of `bookings` (a relation `b`: connection_id, detected_at, starts_at, ends_at) the query keeps,
 * counted (CountedRow): all together, or with `byDay` per connection and local day of detection, through that day.
 */
function countedBookings(
  query: ReportScope,
  bookings: Prisma.Sql,
  byDay?: { through: Prisma.Sql },
): Prisma.Sql {
  const lead = Prisma.sql`date_part('epoch', b.starts_at - b.detected_at)`;
  const day = localDay(query, Prisma.sql`b.detected_at`);
  const group = byDay
    ? Prisma.sql`b.connection_id, ${day} AS day`
    : Prisma.sql`NULL::uuid AS connection_id, NULL::date AS day`;
  return Prisma.sql`
    WITH b AS MATERIALIZED (
      SELECT ${group}, ${lead} AS lead_seconds,
             round(date_part('epoch', b.ends_at - b.starts_at) * 1000)::int8 AS booked_ms,
             round(${lead} * 1000)::int8 AS lead_ms,
             ${startCellOf(Prisma.sql`(b.starts_at AT TIME ZONE ${zoneOf(query)})`)} AS cell
      FROM ${bookings} JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)} ${byDay ? Prisma.sql`AND ${day} <= ${byDay.through}` : Prisma.empty}
    )
    SELECT connection_id::text AS connection_id, day::text AS day, NULL AS name, NULL::int AS key,
           COUNT(*)::int AS bookings, SUM(booked_ms)::float8 AS booked_ms, SUM(lead_ms)::float8 AS lead_ms
    FROM b GROUP BY 1, 2
    UNION ALL
    SELECT connection_id::text, day::text, ${LEAD}, ${leadBucketOf(Prisma.sql`lead_seconds`)}, COUNT(*)::int, NULL, NULL
    FROM b GROUP BY 1, 2, 3, 4
    UNION ALL
    SELECT connection_id::text, day::text, ${START}, cell, COUNT(*)::int, NULL, NULL FROM b GROUP BY 1, 2, 3, 4
    ORDER BY 1, 2`;
}

/** A running total's counts, as JavaScript adds them up (a connection's, or a report's). */
interface Counts {
  bookings: number;
  bookedMs: number;
  leadMs: number;
}

/** Adds a counted row to `counts` and `sums`: its counts, or its histogram bucket. */
function addCountedRow(sums: HistogramSums, counts: Counts, row: CountedRow): void {
  if (row.name === null) {
    counts.bookings += row.bookings;
    counts.bookedMs += row.booked_ms ?? 0;
    counts.leadMs += row.lead_ms ?? 0;
  } else {
    if (row.key === null) throw new Error(`a booking counted in no bucket of '${row.name}'`);
    sums.addKey(row.name, row.key, row.bookings);
  }
}

/**
 * The last day of a connection's running totals a report reads (aliases `s`, its report_days_stored row
 * LEFT JOINed, and `c`): the day before T's, or booking_totals_through if earlier. NULL, so none, when they were
 * stored in another zone than the connection's own, or none are.
 */
const lastTotalsDay = (query: ReportScope) =>
  Prisma.sql`CASE WHEN s.zone = ${STORED_ZONE} AND s.booking_totals_through IS NOT NULL
    THEN LEAST(s.booking_totals_through, ${localDay(query, at(query))} - 1) END`;

/**
 * Each connection's running totals a range reads, the one at the range's last stored day (+1) and, where --from
 * starts it, the one before it (−1), none for a connection whose stored days all lie before --from: a row each with
 * its histograms and sign, and last a row of their counts added up (histograms NULL). The counts in Postgres, as
 * numeric: a year of 10,000 connections' leads in milliseconds passes what a float8 holds exactly.
 */
function storedTotalRows(query: ReportScope): Prisma.Sql {
  // NULL where the connection has none to read: LEAST would pass over a NULL last_day and read rows stored in another
  // zone, or before a move, as --to's.
  const last = Prisma.sql`CASE WHEN l.last_day IS NOT NULL
    THEN LEAST(l.last_day ${query.to === undefined ? Prisma.empty : Prisma.sql`, ${query.to}::date`}) END`;
  const totalThrough = (sign: number, through: Prisma.Sql) => Prisma.sql`
    SELECT ${sign}::int AS sign, t.bookings, t.booked_ms, t.lead_ms, t.histograms
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
    ), r AS MATERIALIZED (
      ${totalThrough(1, last)}
      ${query.from === undefined ? Prisma.empty : Prisma.sql`UNION ALL ${totalThrough(-1, Prisma.sql`${query.from}::date - 1`)}`}
    )
    SELECT r.sign, r.histograms, NULL::float8 AS bookings, NULL::float8 AS booked_ms, NULL::float8 AS lead_ms FROM r
    UNION ALL
    SELECT NULL, NULL, COALESCE(SUM(r.sign * r.bookings), 0)::float8, COALESCE(SUM(r.sign * r.booked_ms::numeric), 0)::float8,
           COALESCE(SUM(r.sign * r.lead_ms::numeric), 0)::float8
    FROM r`;
}

interface StoredTotalRow {
  sign: number | null;
  histograms: Uint8Array | null;
  bookings: number | null;
  booked_ms: number | null;
  lead_ms: number | null;
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

/** What a report's totals may leave out: the median lead, where only the heat map is shown. */
export interface TotalsWanted {
  /** Up to this many bookings the median lead is worked out exactly (EXACT_MEDIAN_UP_TO); 0: from the histogram. */
  exactMedianUpTo?: number;
}

/**
 * The heat map's cells and the totals of a report that reads stored days (readsStoredDays): each connection's stored
 * running totals over the range, and its bookings after them counted; the median lead exact up to `exactMedianUpTo`
 * bookings.
 */
export async function storedCellsAndTotals(
  db: ReportDb,
  query: ReportScope,
  { exactMedianUpTo = EXACT_MEDIAN_UP_TO }: TotalsWanted = {},
): Promise<{ cells: WeekdayHourCell[]; totals: BookingTotals }> {
  const [stored, after] = await Promise.all([
    db.$queryRaw<StoredTotalRow[]>(storedTotalRows(query)),
    db.$queryRaw<CountedRow[]>(countedBookings(query, bookingsAfterDay(query, lastTotalsDay(query)))),
  ]);
  const sums = new HistogramSums();
  const counts: Counts = { bookings: 0, bookedMs: 0, leadMs: 0 };
  for (const row of stored) {
    if (row.sign !== null && row.histograms !== null) sums.addBytes(row.histograms, row.sign < 0 ? -1 : 1);
    else {
      counts.bookings += row.bookings ?? 0;
      counts.bookedMs += row.booked_ms ?? 0;
      counts.leadMs += row.lead_ms ?? 0;
    }
  }
  for (const row of after) addCountedRow(sums, counts, row);
  const cells = sums.buckets(START).map(([key, bookings]) => ({ ...weekdayHourOf(key), bookings }));
  if (counts.bookings === 0)
    return {
      cells,
      totals: { bookings: 0, booked_minutes: null, median_lead_hours: null, mean_lead_hours: null },
    };
  const [fromHistogram] = sums.percentiles(LEAD, [0.5]);
  return {
    cells,
    totals: {
      bookings: counts.bookings,
      booked_minutes: counts.bookedMs / 60_000,
      median_lead_hours:
        counts.bookings <= exactMedianUpTo
          ? await exactMedianLeadHours(db, query)
          : fromHistogram === null || fromHistogram === undefined
            ? null
            : fromHistogram / 3600,
      mean_lead_hours: counts.leadMs / counts.bookings / 3_600_000,
    },
  };
}

/** A connection's last running total (or none), and the running total it carries through its days being stored. */
interface Running {
  sums: HistogramSums;
  counts: Counts;
}

/**
 * Stores the running totals of the days of `query`'s batch (claimed, and marked stored in their zone) after each
 * one's booking_totals_through and up to `through` (over alias `c`), and marks how far they go (never back: a run
 * whose clock is behind the last one's stores nothing); `fresh`: those with none stored (new, or moved to another
 * zone), which start again from their first booking. The number of rows stored.
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
  const [latest, counted] = await Promise.all([
    db.$queryRaw<
      {
        connection_id: string;
        bookings: number;
        booked_ms: number;
        lead_ms: number;
        histograms: Uint8Array;
      }[]
    >(
      Prisma.sql`
        SELECT DISTINCT ON (t.connection_id) t.connection_id::text AS connection_id, t.bookings,
               t.booked_ms::float8 AS booked_ms, t.lead_ms::float8 AS lead_ms, t.histograms
        FROM booking_total_day t JOIN report_days_stored s ON s.connection_id = t.connection_id
        WHERE t.connection_id = ANY(${ids}::uuid[]) AND t.day <= s.booking_totals_through
        ORDER BY t.connection_id, t.day DESC`,
    ),
    db.$queryRaw<CountedRow[]>(
      countedBookings(query, bookingsAfterDay(query, Prisma.sql`s.booking_totals_through`), { through }),
    ),
  ]);
  // Each connection's running total, from its last stored row, carried through its days in order.
  const running = new Map<string, Running>();
  for (const row of latest) {
    const sums = new HistogramSums();
    sums.addBytes(row.histograms);
    running.set(row.connection_id, {
      sums,
      counts: { bookings: row.bookings, bookedMs: row.booked_ms, leadMs: row.lead_ms },
    });
  }
  const rows: { connectionId: string; day: string; counts: Counts; hex: string }[] = [];
  const store = (connectionId: string, day: string, { sums, counts }: Running) =>
    rows.push({
      connectionId,
      day,
      counts: { ...counts },
      // Encoded now: the sums go on adding up for the connection's later days.
      hex: Buffer.from(
        encodeHistograms(new Map([LEAD, START].map((name) => [name, histogramOf(sums.buckets(name))]))),
      ).toString('hex'),
    });
  // The counted rows come in order of connection and day, several a day: a day is stored once its rows are added.
  let open: { connectionId: string; day: string; total: Running } | undefined;
  for (const row of counted) {
    const connectionId = row.connection_id!;
    const day = row.day!;
    if (open !== undefined && (open.connectionId !== connectionId || open.day !== day))
      store(open.connectionId, open.day, open.total);
    if (open === undefined || open.connectionId !== connectionId || open.day !== day) {
      let total = running.get(connectionId);
      if (total === undefined) {
        total = { sums: new HistogramSums(), counts: { bookings: 0, bookedMs: 0, leadMs: 0 } };
        running.set(connectionId, total);
      }
      open = { connectionId, day, total };
    }
    addCountedRow(open.total.sums, open.total.counts, row);
  }
  if (open !== undefined) store(open.connectionId, open.day, open.total);
  // The rows and how far they go, in one statement: a batch with no booking still moves its mark.
  await db.$executeRaw(Prisma.sql`
    WITH stored AS (
      INSERT INTO booking_total_day (connection_id, day, bookings, booked_ms, lead_ms, histograms)
      SELECT r.connection_id, r.day, r.bookings, r.booked_ms, r.lead_ms, decode(r.hex, 'hex')
      FROM unnest(${rows.map((r) => r.connectionId)}::uuid[], ${rows.map((r) => r.day)}::date[],
                  ${rows.map((r) => r.counts.bookings)}::int[], ${rows.map((r) => r.counts.bookedMs)}::float8[]::int8[],
                  ${rows.map((r) => r.counts.leadMs)}::float8[]::int8[], ${rows.map((r) => r.hex)}::text[])
        AS r(connection_id, day, bookings, booked_ms, lead_ms, hex)
      ON CONFLICT (connection_id, day) DO UPDATE SET bookings = EXCLUDED.bookings, booked_ms = EXCLUDED.booked_ms,
        lead_ms = EXCLUDED.lead_ms, histograms = EXCLUDED.histograms
    )
    UPDATE report_days_stored s SET booking_totals_through = GREATEST(s.booking_totals_through, c.through)
    FROM (SELECT c.id, ${through} AS through FROM connection c WHERE c.id = ANY(${ids}::uuid[])) c
    WHERE s.connection_id = c.id`);
  return rows.length;
}
