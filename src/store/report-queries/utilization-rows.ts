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
//   started, its bookings detected before they started. The retention pass stores them (utilization_day,
//   store/utilization-days.ts) with this file's own query, and a report in the connections' own zones reads
//   the stored days and computes only those after them; --tz and --event compute every day.
import { Prisma } from '../../generated/prisma/client.js';
import { slotRecords } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import {
  at,
  bookingScopeFilter,
  connectionName,
  dayRangeFilter,
  dayRangeInstants,
  localDay,
  scopeFilter,
  zoneOf,
  type ReportDb,
} from './report-sql.js';

export interface UtilizationRow {
  connection_id: string;
  connection: string;
  day: Date | string;
  offered_minutes: number;
  bookings: number;
  booked_minutes: number;
}

/** The zone a connection's days were stored in: its own, or UTC when it has none (zoneOf without --tz). */
export const STORED_ZONE = Prisma.sql`COALESCE(c.timezone, 'UTC')`;

/** Whether a report's days may come from the stored ones: they were counted in each connection's own zone, of every event type. */
const readsStoredDays = (query: ReportScope) => query.timezone === undefined && query.eventId === undefined;

/**
 * What the query's connections have not stored of its days (the days before today at T, within --to): their ids
 * (`ids`) and the earliest instant a day after their stored ones starts (`from`), each a scalar subquery
 * Postgres evaluates once. A connection without days stored in its zone bounds `from` by its first successful
 * sync (no slot starts before it), or not at all. Empty when every day asked for is stored.
 */
function unstored(query: ReportScope): { ids: Prisma.Sql; from: Prisma.Sql } {
  const lastDay = Prisma.sql`LEAST(${localDay(query, at(query))} - 1, ${query.to ?? null}::date)`;
  const behind = Prisma.sql`
    FROM connection c LEFT JOIN utilization_stored s ON s.connection_id = c.id AND s.zone = ${STORED_ZONE}
    WHERE (s.through IS NULL OR s.through < ${lastDay})
      ${query.connectionId === undefined ? Prisma.empty : Prisma.sql`AND c.id = ${query.connectionId}::uuid`}`;
  return {
    ids: Prisma.sql`ARRAY(SELECT c.id ${behind})`,
    from: Prisma.sql`(SELECT MIN(CASE WHEN s.through IS NULL
                                      THEN COALESCE(c.first_synced_at, '-infinity'::timestamptz)
                                      ELSE (s.through + 1)::timestamp AT TIME ZONE ${zoneOf(query)} END) ${behind})`,
  };
}

/**
 * Each past local day's figures (connection_id, day, offered_minutes, bookings, booked_minutes), computed from
 * the history; with `afterStored`, only the days after each connection's stored ones.
 */
export function computedUtilizationDays(query: ReportScope, afterStored: boolean): Prisma.Sql {
  const startsAt = Prisma.sql`s.starts_at`;
  const bookingStartsAt = Prisma.sql`b.starts_at`;
  const days = dayRangeInstants(query);
  const rest = afterStored ? unstored(query) : undefined;
  const from =
    rest === undefined
      ? days.from
      : days.from === undefined
        ? rest.from
        : Prisma.sql`GREATEST(${days.from}, ${rest.from})`;
  // Slots that started before T, in the days asked for: packed days outside them are skipped.
  const slots = slotRecords({
    connectionId: query.connectionId,
    connectionIds: rest?.ids,
    startsFrom: from,
    startsUntil: days.until === undefined ? at(query) : Prisma.sql`LEAST(${at(query)}, ${days.until})`,
    seenBy: at(query),
  });
  const storedThrough =
    rest === undefined
      ? Prisma.sql`NULL::date`
      : Prisma.sql`(SELECT s.through FROM utilization_stored s
                    WHERE s.connection_id = c.id AND s.zone = ${STORED_ZONE})`;
  // One pass over the slot rows, grouped by local day: the day's offered time is the union of its slots'
  // intervals (range_agg merges the overlaps of event types and of a slot's several rows).
  return Prisma.sql`
    WITH zones AS MATERIALIZED (
      SELECT c.id, c.timezone, ${localDay(query, at(query))} AS today, ${storedThrough} AS stored_through
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
        ${rest === undefined ? Prisma.empty : Prisma.sql`AND b.connection_id = ANY(${rest.ids}) AND b.starts_at >= ${from}`}
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

/** The stored days (utilization_day) of the query's connections and days, for those stored in their own zone. */
function storedUtilizationDays(query: ReportScope): Prisma.Sql {
  const conditions = [
    Prisma.sql`u.day <= s.through`,
    Prisma.sql`u.day < ${localDay(query, at(query))}`,
    ...(query.connectionId === undefined ? [] : [Prisma.sql`u.connection_id = ${query.connectionId}::uuid`]),
    ...(query.from === undefined ? [] : [Prisma.sql`u.day >= ${query.from}::date`]),
    ...(query.to === undefined ? [] : [Prisma.sql`u.day <= ${query.to}::date`]),
  ];
  return Prisma.sql`
    SELECT u.connection_id, u.day, u.offered_minutes, u.bookings, u.booked_minutes
    FROM utilization_day u
    JOIN connection c ON c.id = u.connection_id
    JOIN utilization_stored s ON s.connection_id = u.connection_id AND s.zone = ${STORED_ZONE}
    WHERE ${Prisma.join(conditions, ' AND ')}`;
}

export async function utilizationRows(prisma: ReportDb, query: ReportScope): Promise<UtilizationRow[]> {
  const stored = readsStoredDays(query);
  const days = stored
    ? Prisma.sql`(${storedUtilizationDays(query)}) UNION ALL (${computedUtilizationDays(query, true)})`
    : computedUtilizationDays(query, false);
  return prisma.$queryRaw<UtilizationRow[]>(Prisma.sql`
    SELECT d.connection_id::text AS connection_id, ${connectionName} AS connection, d.day, d.offered_minutes,
           d.bookings, d.booked_minutes
    FROM (${days}) d
    JOIN connection c ON c.id = d.connection_id
    ORDER BY connection, d.connection_id, d.day`);
}
