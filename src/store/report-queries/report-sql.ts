// SQL pieces every report shares: the zone a row's days are counted in, the connection/event filter, and the
// local-day range. Everything is a bound parameter (Prisma.sql), never spliced text.
import { Prisma } from '../../generated/prisma/client.js';
import type { ReportScope } from './report-scope.js';

/**
 * The zone of connection alias `c`: --tz when given, else the connection's own (or the stand-in Postgres knows it
 * by, query.postgresZones), else UTC (never synced).
 */
export function zoneOf(query: ReportScope): Prisma.Sql {
  const standIns = [...(query.postgresZones ?? [])];
  const own =
    standIns.length === 0
      ? Prisma.sql`c.timezone`
      : Prisma.sql`CASE c.timezone ${Prisma.join(
          standIns.map(([zone, standIn]) => Prisma.sql`WHEN ${zone}::text THEN ${standIn}::text`),
          ' ',
        )} ELSE c.timezone END`;
  return Prisma.sql`COALESCE(${query.timezone ?? null}::text, ${own}, 'UTC')`;
}

/** The local date of a timestamptz expression, in zoneOf(query). */
export function localDay(query: ReportScope, instant: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`((${instant}) AT TIME ZONE ${zoneOf(query)})::date`;
}

export const at = (query: ReportScope): Prisma.Sql => Prisma.sql`${query.at}::timestamptz`;

/** `AND …` keeping the query's connections (--connection, or a batch of them) in `column`; empty for all. */
export function connectionFilter(query: ReportScope, column: Prisma.Sql): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  if (query.connectionId !== undefined) parts.push(Prisma.sql`AND ${column} = ${query.connectionId}::uuid`);
  if (query.connectionBatch !== undefined)
    parts.push(Prisma.sql`AND ${column} = ANY(${query.connectionBatch}::uuid[])`);
  return parts.length === 0 ? Prisma.empty : Prisma.join(parts, ' ');
}

/** `AND …` for --connection and --event on a table alias holding connection_id / upstream_event_id. */
export function scopeFilter(query: ReportScope, alias: string): Prisma.Sql {
  const parts: Prisma.Sql[] = [connectionFilter(query, Prisma.raw(`${alias}.connection_id`))];
  if (query.eventId !== undefined) {
    parts.push(Prisma.sql`AND ${Prisma.raw(alias)}.upstream_event_id = ${query.eventId}`);
  }
  return parts.length === 0 ? Prisma.empty : Prisma.join(parts, ' ');
}

/**
 * `AND …` for --connection and --event on booking rows (alias `b`): a booking belongs to an event type when it
 * closed one of its slots, so --event keeps the bookings whose event_ids hold it.
 */
export function bookingScopeFilter(query: ReportScope): Prisma.Sql {
  const parts: Prisma.Sql[] = [connectionFilter(query, Prisma.sql`b.connection_id`)];
  if (query.eventId !== undefined) parts.push(Prisma.sql`AND b.event_ids @> ARRAY[${query.eventId}::text]`);
  return parts.length === 0 ? Prisma.empty : Prisma.join(parts, ' ');
}

/** Rows of `booking b JOIN connection c` known at T, within the query's connection, event type and days. */
export function bookedWhere(query: ReportScope): Prisma.Sql {
  return Prisma.sql`b.detected_at <= ${at(query)} ${bookingScopeFilter(query)} ${dayRangeFilter(query, Prisma.sql`b.detected_at`)}`;
}

/** Conditions keeping a date `column` (a stored local or UTC day) within --from and --to, inclusive. */
export function dayColumnInRange(query: ReportScope, column: Prisma.Sql): Prisma.Sql[] {
  return [
    ...(query.from === undefined ? [] : [Prisma.sql`${column} >= ${query.from}::date`]),
    ...(query.to === undefined ? [] : [Prisma.sql`${column} <= ${query.to}::date`]),
  ];
}

/**
 * Instants every row on a local day in [from, to] lies within, in any zone (a local day lies within UTC −14 h …
 * +12 h of its own date): `from` inclusive, `until` exclusive; undefined where the query is open.
 */
export function dayRangeInstants(query: ReportScope): { from?: Prisma.Sql; until?: Prisma.Sql } {
  return {
    ...(query.from === undefined
      ? {}
      : { from: Prisma.sql`((${query.from}::date - 1)::timestamp AT TIME ZONE 'UTC')` }),
    ...(query.to === undefined
      ? {}
      : { until: Prisma.sql`((${query.to}::date + 2)::timestamp AT TIME ZONE 'UTC')` }),
  };
}

/**
 * `AND …` keeping rows whose `instant` falls on a local day in [from, to]. The exact test is on the local
 * date; the extra UTC bounds (dayRangeInstants) let an index on the instant narrow the scan first.
 */
export function dayRangeFilter(query: ReportScope, instant: Prisma.Sql): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  const bounds = dayRangeInstants(query);
  if (bounds.from !== undefined) {
    parts.push(
      Prisma.sql`AND ${instant} >= ${bounds.from}`,
      Prisma.sql`AND ${localDay(query, instant)} >= ${query.from}::date`,
    );
  }
  if (bounds.until !== undefined) {
    parts.push(
      Prisma.sql`AND ${instant} < ${bounds.until}`,
      Prisma.sql`AND ${localDay(query, instant)} <= ${query.to}::date`,
    );
  }
  return parts.length === 0 ? Prisma.empty : Prisma.join(parts, ' ');
}

/**
 * Ends a subquery that Postgres must work out once, as it is, rather than merge into the join around it (a subquery
 * with OFFSET is never merged): merged, its expressions are evaluated per row of the join, and its rows are counted
 * by the join's estimate rather than its own.
 */
export const WORKED_OUT_ONCE = Prisma.sql`OFFSET 0`;

/** Readable name of a connection row (alias `c`): e-mail, else display name, else the id. */
export const connectionName = Prisma.sql`COALESCE(c.email, c.display_name, c.id::text)`;

/**
 * The query's connections (alias c: id, connection, rank), each with its readable name and its place in the order
 * reports list them (rank: by name, then id). A report of many rows is put in order by rank (report-order.ts), a
 * number: Postgres sorting a year of 10,000 connections' days by the name itself compared 1.8 million texts, on
 * disk. Stored report days are the exception, listed by the name and id themselves (stored-days.ts, daysInOrder):
 * read in that order, they need merging, not sorting.
 */
export function connectionsInOrder(query: ReportScope): Prisma.Sql {
  return Prisma.sql`(
    SELECT c.id, ${connectionName} AS connection, row_number() OVER (ORDER BY ${connectionName}, c.id) AS rank
    FROM connection c WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
  )`;
}

/**
 * A date column as the reports print it, 2026-03-01: its text in the report session's ISO DateStyle
 * (report-session.ts). Read as text, a day needs no Date made and formatted again per row; to_char would do the
 * same in any DateStyle at ten times the cost (0.9 µs a row).
 */
export const isoDay = (column: Prisma.Sql): Prisma.Sql => Prisma.sql`(${column})::text`;

/** A LIMIT to the first `firstRows` rows of a statement in its order, or nothing where every row is read. */
export const firstRowsOnly = (firstRows: number | undefined): Prisma.Sql =>
  firstRows === undefined ? Prisma.empty : Prisma.sql`LIMIT ${firstRows}`;

/**
 * The title each event type had at the report's instant, the version valid then: (connection_id, upstream_event_id,
 * title) of those `where` keeps (`AND …` on alias e).
 */
export function eventTitlesAt(query: ReportScope, where: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT DISTINCT ON (e.connection_id, e.upstream_event_id) e.connection_id, e.upstream_event_id, e.title
    FROM event_type e
    WHERE e.valid_from <= ${at(query)} ${where}
    ORDER BY e.connection_id, e.upstream_event_id, e.valid_from DESC`;
}

/**
 * Joins, as `et`, the title an event type had at the report's instant (eventTitlesAt), for rows of `alias` that carry
 * connection_id and upstream_event_id. One lookup per event type, then a hash join: a lateral subquery per result row
 * cost 0.2 s on a 100,000-row report.
 */
export function eventTitleAsOf(query: ReportScope, alias: string): Prisma.Sql {
  const row = Prisma.raw(alias);
  return Prisma.sql`LEFT JOIN (${eventTitlesAt(query, scopeFilter(query, 'e'))}) et
    ON et.connection_id = ${row}.connection_id AND et.upstream_event_id = ${row}.upstream_event_id`;
}

/** `figure = EXCLUDED.figure, …`: an upsert's stored row takes each of `columns` from the row it stores again. */
export const takenFromExcluded = (columns: readonly string[]): Prisma.Sql =>
  Prisma.raw(columns.map((column) => `${column} = EXCLUDED.${column}`).join(', '));

/** What a report query runs on: the client itself or a transaction of it. */
export type { ReportDb } from './report-zones.js';
