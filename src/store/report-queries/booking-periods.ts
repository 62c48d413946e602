// The bookings report's rows per local day or week (store/report-queries/bookings-rows.ts says what each
// figure counts): the bookings detected in the period and the slots that opened in it.
import { Prisma } from '../../generated/prisma/client.js';
import { slotRecords } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import {
  daysInOrder,
  laterOf,
  readsStoredDays,
  reportDaysInOrder,
  storedDays,
  storedThrough,
  unstoredParts,
  withUnstoredFrom,
  type ComputedPart,
} from './stored-days.js';
import {
  at,
  bookedWhere,
  connectionsInOrder,
  dayRangeFilter,
  dayRangeInstants,
  localDay,
  scopeFilter,
  zoneOf,
  type ReportDb,
} from './report-sql.js';

const detectedAt = Prisma.sql`b.detected_at`;
const firstSeenAt = Prisma.sql`s.first_seen_at`;

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

/** A period's booking figures over `booking b JOIN connection c` rows grouped by it. */
const BOOKED_FIGURES_SQL = Prisma.sql`COUNT(*)::int AS bookings,
  (SUM(EXTRACT(EPOCH FROM (b.ends_at - b.starts_at))) / 60)::float8 AS booked_minutes,
  (percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (b.starts_at - b.detected_at)))
    / 3600)::float8 AS median_lead_hours,
  (AVG(EXTRACT(EPOCH FROM (b.starts_at - b.detected_at))) / 3600)::float8 AS mean_lead_hours`;

/**
 * Each local day's bookings and opened slots (connection_id, day, bookings, booked_minutes, median_lead_hours,
 * mean_lead_hours, opened), for days with either: bookings by the day they were detected; opened slots by the day
 * they were first seen, after the connection's first sync (what that sync found was open already), by T. With
 * `afterStored`, only the days not stored (after the stored ones, and T's own day, which is not over).
 */
export function computedBookingDays(query: ReportScope, afterStored: boolean): Prisma.Sql {
  if (!afterStored) return computedDaysOf(query, undefined);
  // Every day through --to not stored yet, T's own day included (it is not over: never stored).
  const [behind, none] = unstoredParts(
    query,
    Prisma.sql`COALESCE(${query.to ?? null}::date, 'infinity'::date)`,
  );
  // T's own day starts less than 26 hours before T, in any zone.
  const fromToday = {
    ...behind,
    from: Prisma.sql`LEAST(${behind.from}, ${at(query)} - interval '26 hours')`,
  };
  return Prisma.sql`(${computedDaysOf(query, fromToday)}) UNION ALL (${computedDaysOf(query, none)})`;
}

/** computedBookingDays for every connection (`rest` undefined), or for a part after its stored days. */
function computedDaysOf(query: ReportScope, rest: ComputedPart | undefined): Prisma.Sql {
  const days = dayRangeInstants(query);
  const from = laterOf(days.from, rest?.from);
  // Slots first seen by T in the days asked for: packed days whose first sightings lie outside are skipped (by
  // the index of their last sighting, for the few days after the stored ones).
  const slots = slotRecords({
    connectionId: query.connectionId,
    connectionIds: rest?.ids,
    seenBy: at(query),
    seenFrom: from,
    seenUntil: days.until,
  });
  const notStored = (day: Prisma.Sql) =>
    rest === undefined
      ? Prisma.empty
      : Prisma.sql`AND c.id = ANY(${rest.ids})
          AND (${day} >= ${localDay(query, at(query))} OR ${day} > COALESCE(${storedThrough}, '-infinity'::date))`;
  const bookedDay = localDay(query, detectedAt);
  const openedDay = localDay(query, firstSeenAt);
  // first_synced_at, not the oldest run kept: old runs are pruned (store/retention.ts).
  return Prisma.sql`
    WITH booked AS (
      SELECT b.connection_id, ${bookedDay} AS day, ${BOOKED_FIGURES_SQL}
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)} ${notStored(bookedDay)}
        ${from === undefined ? Prisma.empty : Prisma.sql`AND b.detected_at >= ${from}`}
      GROUP BY 1, 2
    ), opened AS (
      SELECT s.connection_id, ${openedDay} AS day, COUNT(*)::int AS opened
      FROM ${slots} s JOIN connection c ON c.id = s.connection_id
      WHERE c.first_synced_at IS NOT NULL AND s.first_seen_at <= ${at(query)}
        AND s.first_seen_at > c.first_synced_at ${notStored(openedDay)}
        ${scopeFilter(query, 's')} ${dayRangeFilter(query, firstSeenAt)}
      GROUP BY 1, 2
    )
    SELECT COALESCE(b.connection_id, o.connection_id) AS connection_id, COALESCE(b.day, o.day) AS day,
           COALESCE(b.bookings, 0) AS bookings, b.booked_minutes, b.median_lead_hours, b.mean_lead_hours,
           COALESCE(o.opened, 0) AS opened
    FROM booked b FULL JOIN opened o ON o.connection_id = b.connection_id AND o.day = b.day`;
}

/** What a stored booking day holds besides its connection and day: computedBookingDays's columns. */
export const BOOKING_DAY_FIGURES = [
  'bookings',
  'booked_minutes',
  'median_lead_hours',
  'mean_lead_hours',
  'opened',
] as const;

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
