// The bookings report by week (bookings-rows.ts says what each figure counts). A week's median lead is over its
// bookings and cannot be made from its days' medians, so a week worked out from the history reads every booking in
// it: a year of 10,000 connections is 6.2 million bookings, 12-16 s as CSV (docs/performance.md). The retention run
// keeps each week once its last day is stored (booking_week; store/report-days.ts), with the figures weeksAfter
// works out, and the report reads those; it works out only the weeks after them, and a first week --from cuts
// short. A week runs Monday to Sunday, named by its Monday, in the zone its days are stored in.
import { DateTime } from 'luxon';
import { Prisma } from '../../generated/prisma/client.js';
import { BOOKED_FIGURES_SQL, BOOKING_DAY_FIGURES, computedBookingDays } from './booking-days.js';
import type { ReportScope } from './report-scope.js';
import {
  MIDNIGHT_MARGIN,
  readsStoredDays,
  STORED_ZONE,
  storedDays,
  storedRowsInOrder,
} from './stored-days.js';
import {
  at,
  bookedWhere,
  dayRangeInstants,
  connectionFilter,
  connectionsInOrder,
  localDay,
  takenFromExcluded,
  WORKED_OUT_ONCE,
  zoneOf,
  type ReportDb,
} from './report-sql.js';

/** The Sunday on or before a date (NULL for NULL): the last day of the last week over by its end. */
export const sundayOnOrBefore = (day: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`((${day}) - (EXTRACT(isodow FROM ${day})::int % 7))`;

/** What a stored week holds besides its connection and week: the report's figures, as a stored day's. */
export const BOOKING_WEEK_FIGURES = BOOKING_DAY_FIGURES;

/** A local day's week, as its Monday. */
const weekOfDay = (day: Prisma.Sql) => Prisma.sql`date_trunc('week', (${day})::timestamp)::date`;

/**
 * Each week's figures (connection_id, period, …BOOKING_WEEK_FIGURES) from `days`' opened slots (connection_id, day,
 * opened) and `bookings` (a relation over `booking`'s columns, alias b), each by its local day: the bookings the
 * query keeps, by the day they were detected. Weeks with neither have no row.
 */
function weeksOf(query: ReportScope, bookings: Prisma.Sql, days: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    WITH booked AS (
      SELECT b.connection_id, date_trunc('week', b.detected_at AT TIME ZONE ${zoneOf(query)})::date AS period,
             ${BOOKED_FIGURES_SQL}
      FROM ${bookings} JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)}
      GROUP BY 1, 2
    ), opened AS (
      SELECT d.connection_id, ${weekOfDay(Prisma.sql`d.day`)} AS period, SUM(d.opened)::int AS opened
      FROM (${days}) d WHERE d.opened > 0 GROUP BY 1, 2
    )
    SELECT COALESCE(b.connection_id, o.connection_id) AS connection_id, COALESCE(b.period, o.period) AS period,
           COALESCE(b.bookings, 0) AS bookings, b.booked_minutes, b.median_lead_hours, b.mean_lead_hours,
           COALESCE(o.opened, 0) AS opened
    FROM booked b FULL JOIN opened o ON o.connection_id = b.connection_id AND o.period = b.period`;
}

/** Every week worked out from the history, each booking and each day: where the report reads nothing stored. */
function weeksFromHistory(query: ReportScope): Prisma.Sql {
  return weeksOf(query, Prisma.sql`booking b`, computedBookingDays(query, false));
}

/**
 * The weeks of each connection's days after `after` (a day over aliases `s`, its report_days_stored row if any, and
 * `c`; NULL: every day), worked out from its bookings and days: the bookings read by the index on their detection
 * times from the instant its first such day can start, the days stored after it and (with `unstored`) those not
 * stored yet. Days before `after`'s week is over are the caller's to exclude, as the first week's --from does.
 */
export function weeksAfter(query: ReportScope, after: Prisma.Sql, unstored: boolean): Prisma.Sql {
  const storedAfter = storedDays(query, 'booking_day', ['opened'], after);
  const days = unstored
    ? Prisma.sql`(${storedAfter})
                 UNION ALL (${computedBookingDays(query, true, true)})`
    : storedAfter;
  return weeksOf(query, bookingsAfterDay(query, after), days);
}

/**
 * Each of the query's connections' bookings detected on a local day after `after` (a day over aliases `s`, its
 * report_days_stored row LEFT JOINed, and `c`; NULL: every booking), as a relation `b` (connection_id, detected_at,
 * starts_at, ends_at), detected by T and within the range's days (the caller keeps those in its zone: bookedWhere).
 * A probe of the index a connection (OFFSET 0 keeps it one), rather than a scan of every
 * booking; the index holds what is read of each (booking_connection_id_detected_at_idx's INCLUDE), so no heap page
 * is.
 */
export function bookingsAfterDay(query: ReportScope, after: Prisma.Sql): Prisma.Sql {
  // T and the range's days bound each probe of the index, not only the rows it gives: a report --at a year back
  // read every booking since.
  const range = dayRangeInstants(query);
  return Prisma.sql`(
      SELECT c.id AS connection_id, a.after_day, ${zoneOf(query)} AS zone,
             COALESCE((a.after_day + 1)::timestamp AT TIME ZONE ${zoneOf(query)} - ${MIDNIGHT_MARGIN},
                      '-infinity'::timestamptz) AS after_at
      FROM connection c LEFT JOIN report_days_stored s ON s.connection_id = c.id
      CROSS JOIN LATERAL (SELECT ${after} AS after_day) a
      WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
      ${WORKED_OUT_ONCE}
    ) w
    CROSS JOIN LATERAL (
      SELECT b.connection_id, b.detected_at, b.starts_at, b.ends_at FROM booking b
      WHERE b.connection_id = w.connection_id AND b.detected_at >= w.after_at AND b.detected_at <= ${at(query)}
        ${range.from === undefined ? Prisma.empty : Prisma.sql`AND b.detected_at >= ${range.from}`}
        ${range.until === undefined ? Prisma.empty : Prisma.sql`AND b.detected_at < ${range.until}`}
        AND (w.after_day IS NULL OR (b.detected_at AT TIME ZONE w.zone)::date > w.after_day)
      ${WORKED_OUT_ONCE}
    ) b`;
}

/**
 * The last day of the stored weeks a report reads of connection alias `c` (report_days_stored `s`, LEFT JOINed): a
 * Sunday, no later than weeks_through, the day before T's, or --to. NULL, so none, when its weeks were stored in
 * another zone than its own, or none are (LEAST would pass over a NULL weeks_through).
 */
const storedWeeksThrough = (query: ReportScope): Prisma.Sql =>
  Prisma.sql`CASE WHEN s.zone = ${STORED_ZONE} AND s.weeks_through IS NOT NULL THEN ${sundayOnOrBefore(
    Prisma.sql`LEAST(s.weeks_through, ${localDay(query, at(query))} - 1
                     ${query.to === undefined ? Prisma.empty : Prisma.sql`, ${query.to}::date`})`,
  )} END`;

/** The Monday on or after a day 'YYYY-MM-DD', and the day before it. */
function firstWholeWeek(day: string): { monday: string; dayBefore: string } {
  const date = DateTime.fromISO(day, { zone: 'UTC' });
  const monday = date.plus({ days: (8 - date.weekday) % 7 });
  return { monday: monday.toISODate()!, dayBefore: monday.minus({ days: 1 }).toISODate()! };
}

const figuresOf = (alias: string) => Prisma.raw(BOOKING_WEEK_FIGURES.map((f) => `${alias}.${f}`).join(', '));

/** Weeks (connection_id, period, …figures) with their connection's name and rank: (connection_id, connection, rank, period, …). */
const withNames = (query: ReportScope, weeks: Prisma.Sql) => Prisma.sql`
  SELECT w.connection_id, c.connection, c.rank, w.period, ${figuresOf('w')}
  FROM (${weeks}) w JOIN ${connectionsInOrder(query)} c ON c.id = w.connection_id`;

/**
 * Where the report reads stored days: the stored weeks from --from's first Monday (`stored`, undefined when --to
 * ends before it), and the weeks worked out (`computed`): each connection's after its stored ones (weeksAfter), and a
 * first week --from cuts short, alone (its days from --from to that Monday).
 */
function storedAndComputedWeeks(query: ReportScope): { stored?: Prisma.Sql; computed: Prisma.Sql[] } {
  const computed: Prisma.Sql[] = [];
  let whole = query;
  if (query.from !== undefined) {
    const { monday, dayBefore } = firstWholeWeek(query.from);
    if (monday !== query.from) {
      const to = query.to !== undefined && query.to < dayBefore ? query.to : dayBefore;
      computed.push(weeksAfter({ ...query, to }, Prisma.sql`${query.from}::date - 1`, true));
    }
    if (query.to !== undefined && query.to < monday) return { computed };
    whole = { ...query, from: monday };
  }
  // Days after the stored weeks, and none before --from.
  const after =
    whole.from === undefined
      ? storedWeeksThrough(whole)
      : Prisma.sql`GREATEST(${storedWeeksThrough(whole)}, ${whole.from}::date - 1)`;
  computed.push(weeksAfter(whole, after, true));
  const stored = storedRowsInOrder(whole, {
    table: 'booking_week',
    key: 'week',
    columns: BOOKING_WEEK_FIGURES,
    last: Prisma.sql`${storedWeeksThrough(whole)} - 6`,
    bounds: whole.from === undefined ? [] : [Prisma.sql`u.week >= ${whole.from}::date`],
  });
  return { stored, computed };
}

/**
 * The query's connections' bookings per local week (connection_id, connection, rank, period, …figures), to list by
 * daysInOrder (booking-periods.ts, periodsInOrder). Where the report reads stored days, as reportDaysInOrder reads
 * days: the stored weeks a connection at a time in the report's order, and the weeks worked out sorted on their own,
 * for Postgres to merge rather than sort a year's 520,000 weeks again. Else every week from the history, unordered.
 */
export function bookingWeeks(query: ReportScope): Prisma.Sql {
  if (!readsStoredDays(query)) return withNames(query, weeksFromHistory(query));
  const { stored, computed } = storedAndComputedWeeks(query);
  const worked = Prisma.sql`${withNames(
    query,
    Prisma.join(
      computed.map((part) => Prisma.sql`(${part})`),
      ' UNION ALL ',
    ),
  )} ORDER BY c.connection, w.connection_id, w.period`;
  if (stored === undefined) return worked;
  return Prisma.sql`
    SELECT d.connection_id, d.connection, d.rank, d.week AS period, ${figuresOf('d')}
    FROM ((${stored}) UNION ALL (${worked})) d`;
}

/**
 * Stores the weeks of the `claimed` connections (of query's batch) that are over by their stored days, after those
 * were stored in the same transaction, and marks how far they go: the report's own figures (weeksAfter), from
 * each connection's days after its weeks stored. The number of weeks stored.
 */
export async function storeWeeks(
  tx: ReportDb,
  query: ReportScope,
  claimed: readonly string[],
): Promise<number> {
  const figures = Prisma.raw(BOOKING_WEEK_FIGURES.join(', '));
  const updates = takenFromExcluded(BOOKING_WEEK_FIGURES);
  const [done] = await tx.$queryRaw<{ rows: number }[]>(Prisma.sql`
    WITH claimed AS (SELECT unnest(${claimed}::uuid[]) AS id), weeks AS (
      INSERT INTO booking_week (connection_id, week, ${figures})
      SELECT w.connection_id, w.period, ${Prisma.raw(BOOKING_WEEK_FIGURES.map((figure) => `w.${figure}`).join(', '))}
      FROM (${weeksAfter(query, Prisma.sql`s.weeks_through`, false)}) w
      JOIN report_days_stored s ON s.connection_id = w.connection_id
      WHERE w.connection_id IN (SELECT id FROM claimed) AND w.period + 6 <= ${sundayOnOrBefore(Prisma.sql`s.through`)}
      ON CONFLICT (connection_id, week) DO UPDATE SET ${updates}
      RETURNING 1
    ), marked AS (
      UPDATE report_days_stored s SET weeks_through = ${sundayOnOrBefore(Prisma.sql`s.through`)}
      FROM claimed k WHERE s.connection_id = k.id
    )
    SELECT (SELECT COUNT(*) FROM weeks)::int AS rows`);
  return done?.rows ?? 0;
}
