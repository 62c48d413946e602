// availability's rows: per connection, event type and local day, the free slots and free minutes as of an
// instant T (now, or --at), reconstructed from slot history.
//
// Semantics (decided here, relied on by tests and the admin chart):
// - A slot row was open at T when first_seen_at ≤ T and (gone_at IS NULL or gone_at > T): slotfeed had seen it
//   and not yet seen it vanish. Only slots still ahead at T (starts_at > T) count as free: a slot that has
//   started is no longer bookable, even if the next sync had not closed its row yet.
// - Free minutes are the sum of (ends_at − starts_at) over those slots, counted as offered, not merged: two
//   overlapping slots of one event type count twice (each could be booked; either booking removes both, which
//   the history then shows). Event types are never added together into one "free time" figure per row.
// - The day is the slot's start in the connection's zone (or --tz); --from/--to bound those days.
// - A day's slots are final once the day is over in its zone. The retention run stores each such day in a form
//   that answers for any T (availability_day, availability-days.ts), and a report in the connections' own zones
//   reads the stored days and works out only those after them from the slots; --tz and --event work out every day.
import { Prisma } from '../../generated/prisma/client.js';
import {
  minutesOfMs,
  slotLengthMs,
  storedAvailabilityInOrder,
  type StoredAvailabilityRead,
} from './availability-days.js';
import { slotRecords } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import {
  at,
  connectionFilter,
  connectionName,
  dayRangeFilter,
  dayRangeInstants,
  eventTitleAsOf,
  firstRowsOnly,
  isoDay,
  localDay,
  scopeFilter,
  type ReportDb,
} from './report-sql.js';
import { laterOf, readsStoredDays, STORED_ZONE, withUnstoredFrom } from './stored-days.js';
import {
  dayTotalsInParts,
  firstRowsAndDays,
  summedAsShown,
  type DayTotalRow,
  type RowsRead,
} from './first-rows.js';
import type { BesideRead } from './report-session.js';
import type { ExportParts } from './export-parts.js';

export interface AvailabilityRow {
  connection_id: string;
  connection: string;
  event_id: string;
  /** The event type's title at T; null when no version of it was known then. */
  event: string | null;
  day: Date | string;
  free_slots: number;
  free_minutes: number;
}

/** Connections whose days at T are worked out from their slots, and from when. */
interface WorkedOut {
  /** A uuid[] subquery; undefined: the query's connections. */
  ids?: Prisma.Sql;
  /** The earliest instant a day to work out starts. */
  from?: Prisma.Sql;
  /** Each one's last day stored (over alias c), whose days after it are worked out. */
  storedThrough?: Prisma.Sql;
}

/** A connection's (alias c) availability days stored in its zone, if any. */
const STORED_AVAILABILITY = Prisma.sql`FROM report_days_stored s
  WHERE s.connection_id = c.id AND s.zone = ${STORED_ZONE} AND s.availability_through IS NOT NULL`;

/** Each day's free slots and minutes at T (connection_id, upstream_event_id, day, free_slots, free_minutes) from slots. */
function workedOutAvailability(query: ReportScope, part: WorkedOut): Prisma.Sql {
  const startsAt = Prisma.sql`s.starts_at`;
  const days = dayRangeInstants(query);
  // Only slots still ahead at T, first seen by then: packed days before T's are skipped.
  const slots = slotRecords({
    connectionId: query.connectionId,
    connectionIds: part.ids,
    startsFrom: laterOf(at(query), laterOf(days.from, part.from)),
    startsUntil: days.until,
    seenBy: at(query),
  });
  const after =
    part.storedThrough === undefined
      ? Prisma.empty
      : Prisma.sql`AND ${localDay(query, startsAt)} > COALESCE(${part.storedThrough}, '-infinity'::date)`;
  return Prisma.sql`
    SELECT s.connection_id, s.upstream_event_id, ${localDay(query, startsAt)} AS day,
           COUNT(*)::int AS free_slots, ${minutesOfMs(Prisma.sql`SUM(${slotLengthMs})`)} AS free_minutes
    FROM ${slots} s JOIN connection c ON c.id = s.connection_id
    WHERE s.first_seen_at <= ${at(query)}
      AND (s.gone_at IS NULL OR s.gone_at > ${at(query)})
      AND s.starts_at > ${at(query)}
      ${part.from === undefined ? Prisma.empty : Prisma.sql`AND s.starts_at >= ${part.from}`}
      ${after}
      ${scopeFilter(query, 's')}
      ${dayRangeFilter(query, startsAt)}
    GROUP BY 1, 2, 3`;
}

/** The order availability's rows (alias a) are listed in: by connection, event type (by title, then id), day. */
export const AVAILABILITY_IN_ORDER = Prisma.sql`
  ORDER BY a.connection, a.connection_id, a.event NULLS LAST, a.event_id, a.day`;

/**
 * Worked-out days at T (workedOutAvailability of `part`) with each connection's readable name and the event type's
 * title at T: (connection_id, connection, event_id, event, day, free_slots, free_minutes).
 */
function workedOutWithNames(query: ReportScope, part: WorkedOut): Prisma.Sql {
  return Prisma.sql`
    SELECT o.connection_id, ${connectionName} AS connection,
           o.upstream_event_id AS event_id, et.title AS event, o.day, o.free_slots, o.free_minutes
    FROM (${workedOutAvailability(query, part)}) o
    JOIN connection c ON c.id = o.connection_id
    ${eventTitleAsOf(query, 'o')}`;
}

/**
 * The report's rows (connection_id, connection, event_id, event, day, free_slots, free_minutes) from wherever they are
 * kept, to list by AVAILABILITY_IN_ORDER: read as rows here, and as CSV by the export (csv-rows.ts). Where the report
 * reads stored days (`scope` with its unstoredFrom looked up, withUnstoredFrom): those stored, in that order
 * (storedAvailabilityInOrder), and sorted on their own the days after them of the connections with stored ones (from
 * the unstoredFrom: report-days.ts stores their availability days through the same day as their other days, in one
 * transaction, which availability-days-migration.test.ts checks) and every day of
 * the rest, so that Postgres merges the parts (a Merge Append) rather than sorting every row. Else every day from the
 * slots. Not `inOrder`, every part in no order, and not `titled`, the stored days without titles (for a statement that
 * sums them by day).
 */
export function availabilityWithNames(
  scope: ReportScope,
  { inOrder = true, titled = true }: StoredAvailabilityRead = {},
): Prisma.Sql {
  if (!readsStoredDays(scope)) return workedOutWithNames(scope, {});
  // The query's connections with availability days stored in their zone, or without: each a uuid[] subquery.
  const withStored = (stored: boolean) => Prisma.sql`ARRAY(
    SELECT c.id FROM connection c
    WHERE ${stored ? Prisma.empty : Prisma.sql`NOT`} EXISTS (SELECT 1 ${STORED_AVAILABILITY})
      ${connectionFilter(scope, Prisma.sql`c.id`)})`;
  const from = scope.unstoredFrom === undefined ? undefined : Prisma.sql`${scope.unstoredFrom}::timestamptz`;
  const workedOut = Prisma.sql`
    SELECT * FROM (${workedOutWithNames(scope, {
      ids: withStored(true),
      ...(from === undefined ? {} : { from }),
      storedThrough: Prisma.sql`(SELECT s.availability_through ${STORED_AVAILABILITY})`,
    })}) w1
    UNION ALL
    SELECT * FROM (${workedOutWithNames(scope, { ids: withStored(false) })}) w2`;
  return Prisma.sql`
    (${storedAvailabilityInOrder(scope, { inOrder, titled })})
    UNION ALL
    (SELECT a.* FROM (${workedOut}) a ${inOrder ? AVAILABILITY_IN_ORDER : Prisma.empty})`;
}

/** The report's rows in its order (only the first `firstRows` of them, where that is given). */
export async function availabilityRows(
  prisma: ReportDb,
  query: ReportScope,
  firstRows?: number,
): Promise<AvailabilityRow[]> {
  const scope = await withUnstoredFrom(prisma, query);
  return prisma.$queryRaw<AvailabilityRow[]>(Prisma.sql`
    SELECT a.connection_id::text AS connection_id, a.connection, a.event_id, a.event, a.day, a.free_slots,
           a.free_minutes
    FROM (${availabilityWithNames(scope)}) a
    ${AVAILABILITY_IN_ORDER}
    ${firstRowsOnly(firstRows)}`);
}

/** The figures availability's days are totalled by (first-rows.ts). */
const AVAILABILITY_FIGURES = ['free_slots', 'free_minutes'] as const;
export type AvailabilityFigure = (typeof AVAILABILITY_FIGURES)[number];

/** Each day's rows and figures summed over every connection and event type of the query. */
export async function availabilityDayTotals(
  prisma: ReportDb,
  query: ReportScope,
): Promise<DayTotalRow<AvailabilityFigure>[]> {
  const scope = await withUnstoredFrom(prisma, query);
  return prisma.$queryRaw<DayTotalRow<AvailabilityFigure>[]>(Prisma.sql`
    SELECT ${isoDay(Prisma.sql`a.day`)} AS day, COUNT(*)::float8 AS rows, SUM(a.free_slots)::float8 AS free_slots,
           ${summedAsShown(Prisma.sql`a.free_minutes`)} AS free_minutes
    FROM (${availabilityWithNames(scope, { inOrder: false, titled: false })}) a
    GROUP BY a.day`);
}

/**
 * The report's rows, or its first `firstRows` and its day totals (first-rows.ts), those read in `parts` (an export's:
 * every connection's stored days at T are the page's cost, its rows a LIMIT; docs/performance.md).
 */
export function availabilityRead(
  prisma: ReportDb,
  query: ReportScope & { firstRows?: number },
  beside: BesideRead,
  parts: Pick<ExportParts, 'atOnce' | 'fewestConnections'>,
): Promise<RowsRead<AvailabilityRow, AvailabilityFigure>> {
  return firstRowsAndDays(
    query.firstRows,
    (firstRows) => availabilityRows(prisma, query, firstRows),
    () =>
      dayTotalsInParts(prisma, query, beside, {
        parts,
        figures: AVAILABILITY_FIGURES,
        days: availabilityDayTotals,
      }),
  );
}
