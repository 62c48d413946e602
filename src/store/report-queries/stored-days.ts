// Report days stored once they are over (store/report-days.ts): what a report reads of them and how it finds the
// days it must still compute. A connection's days are stored through `report_days_stored.through`, counted in
// its zone then; they count for a report only in that zone, of every event type.
import { Prisma } from '../../generated/prisma/client.js';
import type { ReportScope } from './report-scope.js';
import type { ZoneReader } from './report-zones.js';
import {
  at,
  connectionFilter,
  connectionsInOrder,
  dayColumnInRange,
  localDay,
  WORKED_OUT_ONCE,
  zoneOf,
} from './report-sql.js';

/** The zone a connection's days are stored in (alias `c`): its own, or UTC when it has none (zoneOf without --tz). */
export const STORED_ZONE = Prisma.sql`COALESCE(c.timezone, 'UTC')`;

/** `alias.column, …` for each of `columns`. */
const columnsOf = (alias: string, columns: readonly string[]): Prisma.Sql =>
  Prisma.raw(columns.map((column) => `${alias}.${column}`).join(', '));

/**
 * The last stored day a report reads of a connection (aliases `s`, its report_days_stored row, and `c`): the day
 * before T's, or `through` if earlier; NULL, so none, when its days were stored in another zone than its own.
 */
const lastStoredDay = (query: ReportScope) =>
  Prisma.sql`CASE WHEN s.zone = ${STORED_ZONE} THEN LEAST(s.through, ${localDay(query, at(query))} - 1) END`;

/** Whether a report may read stored days: it counts days in each connection's own zone, of every event type. */
export const readsStoredDays = (query: ReportScope): boolean =>
  query.timezone === undefined && query.eventId === undefined;

/** The last day stored for connection alias `c` in its current zone, or NULL. */
export const storedThrough = Prisma.sql`(SELECT s.through FROM report_days_stored s
  WHERE s.connection_id = c.id AND s.zone = ${STORED_ZONE})`;

/**
 * How far a local midnight can lie from the instant Postgres reads it as (`day::timestamp AT TIME ZONE zone`):
 * where the clock is set back across midnight, midnight comes twice and Postgres reads the later one (as in
 * Havana); where it is set forward across it, there is none. No zone's clock moves by three hours, so an instant
 * this much before the reading is still on the day before, and one this much after it on the day itself.
 */
export const MIDNIGHT_MARGIN = Prisma.sql`interval '3 hours'`;

/** Connections (alias c) with days stored (s) in their current zone. */
const STORED_IN_ZONE = Prisma.sql`
  FROM connection c JOIN report_days_stored s ON s.connection_id = c.id AND s.zone = ${STORED_ZONE}`;

/**
 * Where connection `c`'s days after its stored ones (`s`) start, at the earliest: a local day after `through`
 * starts at its midnight in the zone, MIDNIGHT_MARGIN at most before Postgres's reading of it.
 */
const afterThroughInstant = (query: ReportScope) =>
  Prisma.sql`(s.through + 1)::timestamp AT TIME ZONE ${zoneOf(query)} - ${MIDNIGHT_MARGIN}`;

/**
 * `scope` with its unstoredFrom looked up (where the report reads stored days): the earliest afterThroughInstant
 * of its connections with days stored. As a value, Postgres plans with it: as unstoredParts's subquery it could
 * not, and read every packed slot day of a year of 10,000 connections, 2.3 GB, for the two days after the stored
 * ones (the bookings report by day: docs/performance.md). Over every such connection, not only those behind a
 * report's last day: never later than the statement's own, so it may widen the range read, never narrow it.
 * `db` must read in the snapshot the report's statement is run in: a connection stored or moved to another zone
 * in between could start its days after the stored ones earlier than the value says.
 */
export async function withUnstoredFrom<S extends ReportScope>(db: ZoneReader, scope: S): Promise<S> {
  if (!readsStoredDays(scope)) return scope;
  const rows = await db.$queryRaw<{ unstored_from: string | null }[]>(Prisma.sql`
    SELECT MIN(${afterThroughInstant(scope)})::text AS unstored_from
    ${STORED_IN_ZONE} WHERE TRUE ${connectionFilter(scope, Prisma.sql`c.id`)}`);
  // An aggregate answers one row, NULL when no connection has days stored: no row is a reader that answers none,
  // and NULL then would skip every day after the stored ones.
  if (rows.length !== 1) throw new Error(`the start of the unstored days came back as ${rows.length} rows`);
  return { ...scope, unstoredFrom: rows[0]!.unstored_from };
}

/** Connections whose days a report computes: their ids (a uuid[] subquery), and where their days start. */
export interface ComputedPart {
  ids: Prisma.Sql;
  /** The earliest instant a day to compute starts; undefined: every day. */
  from?: Prisma.Sql;
}

/**
 * The query's connections with days up to `lastDay` (an SQL date over alias `c`) not read from the stored ones, in
 * two parts, each a subquery Postgres evaluates once: those with days stored in their current zone, whose days to
 * compute start after `through` or on T's day (`from`: the earliest start after `through` among them, or the
 * scope's unstoredFrom where it was looked up, which may be earlier; T's day is the caller's to add where it
 * counts it), and those without, whose days are all computed.
 * Kept apart so that a connection with nothing stored (new since the last retention run, or moved to another
 * zone) does not make the report read every connection's whole history.
 */
export function unstoredParts(query: ReportScope, lastDay: Prisma.Sql): [ComputedPart, ComputedPart] {
  const connection = connectionFilter(query, Prisma.sql`c.id`);
  // By the last stored day a report reads, which is before T's (lastStoredDay): T's own day, stored or not, is
  // worked out up to T. By `through` alone, a connection stored past an --at in the past and through --to had
  // that day in neither part, and its opened slots went uncounted.
  const behind = Prisma.sql`${STORED_IN_ZONE}
    WHERE LEAST(s.through, ${localDay(query, at(query))} - 1) < ${lastDay} ${connection}`;
  return [
    {
      ids: Prisma.sql`ARRAY(SELECT c.id ${behind})`,
      from:
        query.unstoredFrom === undefined
          ? Prisma.sql`(SELECT MIN(${afterThroughInstant(query)}) ${behind})`
          : Prisma.sql`${query.unstoredFrom}::timestamptz`,
    },
    {
      ids: Prisma.sql`ARRAY(
        SELECT c.id FROM connection c
        WHERE NOT EXISTS (SELECT 1 FROM report_days_stored s WHERE s.connection_id = c.id AND s.zone = ${STORED_ZONE})
          ${connection})`,
    },
  ];
}

/**
 * `table`'s stored rows (alias u: connection_id, day, …) of the query's connections and local days before T's,
 * for connections whose days are stored in their current zone.
 *
 * Each connection's last day to read is worked out once, in its own subquery: T's local day is a zone conversion
 * (0.3 µs), which in the join would be one per stored row, 1.8 million for a year of 10,000 connections. Its zone
 * is checked inside that day (NULL, so no rows, when the days were stored in another zone) rather than in a
 * condition, which Postgres takes to keep one connection in 200: it would then expect a handful of connections and
 * read each one's days by index, a heap page per day, where a year over all of them is most of the table.
 * With `after` (a day over aliases `s` and `c`), only each connection's days after it (all, where it is NULL).
 */
export function storedDays(
  query: ReportScope,
  table: 'utilization_day' | 'booking_day',
  columns: readonly string[],
  after?: Prisma.Sql,
): Prisma.Sql {
  const conditions = [
    Prisma.sql`u.day <= s.last_day ${connectionFilter(query, Prisma.sql`u.connection_id`)}`,
    ...(after === undefined ? [] : [Prisma.sql`u.day > COALESCE(s.after_day, '-infinity'::date)`]),
    ...dayColumnInRange(query, Prisma.sql`u.day`),
  ];
  return Prisma.sql`
    SELECT u.connection_id, u.day, ${columnsOf('u', columns)}
    FROM (
      SELECT s.connection_id, ${lastStoredDay(query)} AS last_day
             ${after === undefined ? Prisma.empty : Prisma.sql`, ${after} AS after_day`}
      FROM report_days_stored s JOIN connection c ON c.id = s.connection_id
      WHERE TRUE ${connectionFilter(query, Prisma.sql`s.connection_id`)}
      ${WORKED_OUT_ONCE}
    ) s
    JOIN ${Prisma.raw(table)} u ON u.connection_id = s.connection_id
    WHERE ${Prisma.join(conditions, ' AND ')}`;
}

/** The later of two optional lower bounds (SQL instants): both, either, or none. */
export function laterOf(a: Prisma.Sql | undefined, b: Prisma.Sql | undefined): Prisma.Sql | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Prisma.sql`GREATEST(${a}, ${b})`;
}

/**
 * `table`'s stored rows (keyed by connection_id and `key`, a date), with each connection's name and rank
 * (connectionsInOrder): (connection_id, connection, rank, <key>, …), in the report's order, up to `last` (a date over
 * aliases `c` and `s`, a connection and its report_days_stored row) and within `bounds` (conditions on alias `u`).
 * Connection by connection in that order, each one's rows are read from the table's primary key, which holds their
 * figures too (INCLUDE, since 20261201190000_report_days_in_key_order): in key order, with no heap page read and no
 * sort of the whole. Postgres then only checks the order of each connection's 180-odd days (an incremental sort). A
 * year of 10,000 connections' utilization as CSV took 1.5–1.6 s so, where reading the table whole and sorting its 1.8
 * million rows by rank and day (on disk) took 2.5–2.6 s on the same database (docs/performance.md). Not `inOrder`,
 * the same rows in no order, for a statement that only counts them: that check of every connection's days was a
 * third of counting a year of 10,000 connections' 3.57 million booking days.
 */
export function storedRowsInOrder(
  query: ReportScope,
  stored: { table: string; key: string; columns: readonly string[]; last: Prisma.Sql; bounds: Prisma.Sql[] },
  inOrder = true,
): Prisma.Sql {
  const key = Prisma.raw(stored.key);
  const orderBy = (order: string) => Prisma.raw(inOrder ? `ORDER BY ${order}` : '');
  // Worked out once a connection, before its rows are read: joined to them instead, the rows came out of the
  // join in no order.
  const last = Prisma.sql`(
    SELECT ${stored.last}
    FROM connection c JOIN report_days_stored s ON s.connection_id = c.id
    WHERE c.id = o.id)`;
  const conditions = [Prisma.sql`u.connection_id = o.id`, Prisma.sql`u.${key} <= ${last}`, ...stored.bounds];
  return Prisma.sql`
    SELECT o.id AS connection_id, o.connection, o.rank, d.${key}, ${columnsOf('d', stored.columns)}
    FROM (SELECT * FROM ${connectionsInOrder(query)} o ${orderBy('o.connection, o.id')}) o
    CROSS JOIN LATERAL (
      SELECT u.${key}, ${columnsOf('u', stored.columns)} FROM ${Prisma.raw(stored.table)} u
      WHERE ${Prisma.join(conditions, ' AND ')}
      ${orderBy(`u.${stored.key}`)}
    ) d
    ${orderBy(`o.connection, o.id, d.${stored.key}`)}`;
}

/**
 * A report's days of its connections (connection_id, connection, rank, day, …columns), to list by daysInOrder. Where
 * the report reads stored days, each part comes in the report's order: the stored days as storedRowsInOrder reads
 * them, and the days computed after them sorted on their own, so that Postgres merges the two (a Merge Append)
 * instead of sorting every row again. Where it reads none (--tz, --event), the days computed are unordered; not
 * `inOrder`, every part is (for a statement that only counts them).
 */
export function reportDaysInOrder(
  query: ReportScope,
  table: 'utilization_day' | 'booking_day',
  columns: readonly string[],
  computed: (afterStored: boolean) => Prisma.Sql,
  inOrder = true,
): Prisma.Sql {
  const withNames = (afterStored: boolean) => Prisma.sql`
    SELECT d.connection_id, c.connection, c.rank, d.day, ${columnsOf('d', columns)}
    FROM (${computed(afterStored)}) d
    JOIN ${connectionsInOrder(query)} c ON c.id = d.connection_id`;
  if (!readsStoredDays(query)) return withNames(false);
  return Prisma.sql`
    (${storedRowsInOrder(
      query,
      {
        table,
        key: 'day',
        columns,
        last: lastStoredDay(query),
        bounds: dayColumnInRange(query, Prisma.sql`u.day`),
      },
      inOrder,
    )})
    UNION ALL
    (${withNames(true)} ${Prisma.raw(inOrder ? 'ORDER BY c.connection, d.connection_id, d.day' : '')})`;
}

/**
 * The order reportDaysInOrder's rows (alias: connection, connection_id, rank and `day`) are listed in: by
 * connection name, then id, then day, the order connectionsInOrder ranks the connections in. Where stored days are
 * read, by the name and id themselves, which Postgres can see each part is sorted by; else by rank, a number,
 * cheaper to sort than the names' text.
 */
export const daysInOrder = (query: ReportScope, alias: string, day = 'day'): Prisma.Sql =>
  Prisma.raw(
    readsStoredDays(query)
      ? `ORDER BY ${alias}.connection, ${alias}.connection_id, ${alias}.${day}`
      : `ORDER BY ${alias}.rank, ${alias}.${day}`,
  );
