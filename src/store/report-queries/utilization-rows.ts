// utilization's rows: for past local days, the time offered for booking and the time booked, per connection.
//
// Semantics (the same notion of a booking as the bookings report):
// - Past day: a local day before the local date of T (now, or --at), in the connection's zone or --tz.
// - Offered minutes: the length of the union of the slots of that day (any event type, or --event's) that
//   slotfeed saw open before they started (first_seen_at < starts_at, first_seen_at ≤ T). Three event types
//   offering the same hour offer one hour, not three.
// - Booked minutes: the length of the union of the inferred bookings (booking table, detected ≤ T) that start
//   that day (with --event, those that closed a slot of that event type), within the offered time and less the
//   time a slot still offered when it started: time booked, cancelled and rebooked counts once, and time booked
//   then cancelled for good was free in the end. So the share = booked ÷ offered lies between 0 and 1, rounded
//   to 4 decimals.
// - A day's figures are final once the day is over in its zone: its slots were all first seen before they
//   started, its bookings detected before they started. The retention run stores them (utilization_day,
//   store/report-days.ts) with this file's own query, and a report in the connections' own zones reads
//   the stored days and computes only those after them; --tz and --event compute every day.
import { Prisma } from '../../generated/prisma/client.js';
import { slotRecords } from './history-records.js';
import { inReportOrder, type RankedRow } from './report-order.js';
import type { ReportScope } from './report-scope.js';
import {
  dayTotalsBeside,
  firstRowsAndDays,
  summedAsShown,
  type DayTotalRow,
  type RowsRead,
} from './first-rows.js';
import type { BesideRead } from './report-session.js';
import {
  daysInOrder,
  laterOf,
  reportDaysInOrder,
  storedThrough,
  unstoredParts,
  withUnstoredFrom,
  type ComputedPart,
} from './stored-days.js';
import {
  at,
  bookingScopeFilter,
  dayRangeFilter,
  dayRangeInstants,
  firstRowsOnly,
  isoDay,
  localDay,
  scopeFilter,
  type ReportDb,
} from './report-sql.js';

export interface UtilizationRow extends RankedRow {
  connection_id: string;
  connection: string;
  offered_minutes: number;
  bookings: number;
  booked_minutes: number;
}

/**
 * Each past local day's figures (connection_id, day, offered_minutes, bookings, booked_minutes), computed from
 * the history; with `afterStored`, only the days after each connection's stored ones.
 */
export function computedUtilizationDays(query: ReportScope, afterStored: boolean): Prisma.Sql {
  if (!afterStored) return computedDaysOf(query, undefined);
  // The days before T's, within --to, not stored yet.
  const lastDay = Prisma.sql`LEAST(${localDay(query, at(query))} - 1, ${query.to ?? null}::date)`;
  const [behind, none] = unstoredParts(query, lastDay);
  return Prisma.sql`(${computedDaysOf(query, behind)}) UNION ALL (${computedDaysOf(query, none)})`;
}

/** computedUtilizationDays for every connection (`rest` undefined), or for a part after its stored days. */
function computedDaysOf(query: ReportScope, rest: ComputedPart | undefined): Prisma.Sql {
  const startsAt = Prisma.sql`s.starts_at`;
  const bookingStartsAt = Prisma.sql`b.starts_at`;
  const days = dayRangeInstants(query);
  const from = laterOf(days.from, rest?.from);
  // Slots that started before T, in the days asked for: packed days outside them are skipped.
  const slots = slotRecords({
    connectionId: query.connectionId,
    connectionIds: rest?.ids,
    startsFrom: from,
    startsUntil: days.until === undefined ? at(query) : Prisma.sql`LEAST(${at(query)}, ${days.until})`,
    seenBy: at(query),
  });
  // One pass over the slot rows, grouped by local day: the day's offered time is the union of its slots'
  // intervals (range_agg merges the overlaps of event types and of a slot's several rows).
  return Prisma.sql`
    WITH zones AS MATERIALIZED (
      SELECT c.id, c.timezone, ${localDay(query, at(query))} AS today,
             ${rest === undefined ? Prisma.sql`NULL::date` : storedThrough} AS stored_through
      FROM connection c
      ${rest === undefined ? Prisma.empty : Prisma.sql`WHERE c.id = ANY(${rest.ids})`}
    ), offered AS (
      SELECT s.connection_id, ${localDay(query, startsAt)} AS day, c.today,
             range_agg(tstzrange(s.starts_at, s.ends_at)) AS spans,
             -- Time a slot still offered when it started (as known at T): whatever was booked there and
             -- cancelled again was free when the time came.
             COALESCE(range_agg(tstzrange(s.starts_at, s.ends_at)) FILTER (
               WHERE s.gone_at IS NULL OR s.gone_at > ${at(query)} OR s.gone_at >= s.starts_at),
               '{}'::tstzmultirange) AS open_at_start
      FROM ${slots} s JOIN zones c ON c.id = s.connection_id
      WHERE s.first_seen_at <= ${at(query)} AND s.first_seen_at < s.starts_at
        AND s.starts_at < ${at(query)}
        AND (c.stored_through IS NULL OR ${localDay(query, startsAt)} > c.stored_through)
        ${scopeFilter(query, 's')}
        ${dayRangeFilter(query, startsAt)}
      GROUP BY 1, 2, 3
    ), booked AS (
      SELECT b.connection_id, ${localDay(query, bookingStartsAt)} AS day, COUNT(*)::int AS bookings,
             range_agg(tstzrange(b.starts_at, b.ends_at)) AS spans
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE b.detected_at <= ${at(query)} AND b.starts_at < ${at(query)}
        ${rest === undefined ? Prisma.empty : Prisma.sql`AND b.connection_id = ANY(${rest.ids})`}
        ${from === undefined ? Prisma.empty : Prisma.sql`AND b.starts_at >= ${from}`}
        ${bookingScopeFilter(query)}
        ${dayRangeFilter(query, bookingStartsAt)}
      GROUP BY 1, 2
    )
    SELECT o.connection_id, o.day,
           ((SELECT SUM(EXTRACT(EPOCH FROM (upper(r) - lower(r)))) FROM unnest(o.spans) r) / 60)::float8
             AS offered_minutes,
           COALESCE(b.bookings, 0) AS bookings,
           COALESCE((SELECT SUM(EXTRACT(EPOCH FROM (upper(r) - lower(r))))
                     FROM unnest(b.spans * o.spans - o.open_at_start) r) / 60, 0)::float8 AS booked_minutes
    FROM offered o
    LEFT JOIN booked b ON b.connection_id = o.connection_id AND b.day = o.day
    WHERE o.day < o.today`;
}

/** What a stored utilization day holds besides its connection and day: computedUtilizationDays's columns. */
export const UTILIZATION_FIGURES = ['offered_minutes', 'bookings', 'booked_minutes'] as const;

/**
 * Each past local day of the query's connections (connection_id, connection, rank, day, offered_minutes, bookings,
 * booked_minutes), with its connection's readable name and place in the report's order (connectionsInOrder), each
 * part in that order (reportDaysInOrder). Read as rows here, and as CSV by the export (csv-rows.ts), which lists
 * them by daysInOrder.
 */
export function utilizationDays(query: ReportScope, inOrder = true): Prisma.Sql {
  return reportDaysInOrder(
    query,
    'utilization_day',
    UTILIZATION_FIGURES,
    (afterStored) => computedUtilizationDays(query, afterStored),
    inOrder,
  );
}

/**
 * The report's rows in its order. Every row is put in order here (report-order.ts); only the first `firstRows`, where
 * that is given, by Postgres, which merges the parts' orders and stops there.
 */
export async function utilizationRows(
  prisma: ReportDb,
  query: ReportScope,
  firstRows?: number,
): Promise<UtilizationRow[]> {
  const rows = await prisma.$queryRaw<UtilizationRow[]>(Prisma.sql`
    SELECT u.connection_id::text AS connection_id, u.connection, u.rank::int AS rank,
           ${isoDay(Prisma.sql`u.day`)} AS day, u.offered_minutes, u.bookings, u.booked_minutes
    FROM (${utilizationDays(await withUnstoredFrom(prisma, query))}) u
    ${firstRows === undefined ? Prisma.empty : Prisma.sql`${daysInOrder(query, 'u')} ${firstRowsOnly(firstRows)}`}`);
  return firstRows === undefined ? inReportOrder(rows) : rows;
}

/** The figures utilization's days are totalled by (first-rows.ts). */
export type UtilizationFigure = (typeof UTILIZATION_FIGURES)[number];

/** Each past day's rows and figures summed over every connection of the query. */
export async function utilizationDayTotals(
  prisma: ReportDb,
  query: ReportScope,
): Promise<DayTotalRow<UtilizationFigure>[]> {
  return prisma.$queryRaw<DayTotalRow<UtilizationFigure>[]>(Prisma.sql`
    SELECT ${isoDay(Prisma.sql`u.day`)} AS day, COUNT(*)::float8 AS rows,
           ${summedAsShown(Prisma.sql`u.offered_minutes`)} AS offered_minutes,
           COALESCE(SUM(u.bookings), 0)::float8 AS bookings,
           ${summedAsShown(Prisma.sql`u.booked_minutes`)} AS booked_minutes
    FROM (${utilizationDays(await withUnstoredFrom(prisma, query), false)}) u
    GROUP BY u.day`);
}

/** The report's rows, or its first `firstRows` and its day totals (first-rows.ts). */
export function utilizationRead(
  prisma: ReportDb,
  query: ReportScope & { firstRows?: number },
  beside: BesideRead,
): Promise<RowsRead<UtilizationRow, UtilizationFigure>> {
  return firstRowsAndDays(
    query.firstRows,
    (firstRows) => utilizationRows(prisma, query, firstRows),
    () => dayTotalsBeside(beside, (db) => utilizationDayTotals(db, query)),
  );
}
