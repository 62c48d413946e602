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
import { slotRecords } from './history-records.js';
import type { BookingsGrouping, ReportScope } from './report-scope.js';
import { laterOf, readsStoredDays, storedDays, storedThrough, unstored } from './stored-days.js';
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

const detectedAt = Prisma.sql`b.detected_at`;
const firstSeenAt = Prisma.sql`s.first_seen_at`;

export interface BookingRow {
  connection_id: string;
  connection: string;
  detected_at: Date;
  starts_at: Date;
  ends_at: Date;
  event_ids: string[];
  slots_closed: number;
}

/** Every booking, one row each: when it was seen, when it lies, how long it is, how far ahead it was made. */
async function eachBooking(prisma: ReportDb, query: ReportScope): Promise<BookingRow[]> {
  return prisma.$queryRaw<BookingRow[]>(Prisma.sql`
    SELECT b.connection_id::text AS connection_id, ${connectionName} AS connection, b.detected_at, b.starts_at,
           b.ends_at, b.event_ids, b.slots_closed
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}
    ORDER BY connection, b.connection_id, b.starts_at, b.id`);
}

function period(query: ReportScope, by: 'day' | 'week', instant: Prisma.Sql): Prisma.Sql {
  return by === 'week'
    ? Prisma.sql`date_trunc('week', (${instant}) AT TIME ZONE ${zoneOf(query)})::date`
    : localDay(query, instant);
}

/** Rows of `booking b JOIN connection c` known at T, within the query's connection, event type and days. */
function bookedWhere(query: ReportScope): Prisma.Sql {
  return Prisma.sql`b.detected_at <= ${at(query)} ${bookingScopeFilter(query)} ${dayRangeFilter(query, detectedAt)}`;
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

/**
 * Slots opened per local day of their first sighting (connection_id, day, opened): those first seen after the
 * connection's first sync (what that sync found was open already), by T; with `afterStored`, only the days not
 * stored (after the stored ones, and T's own day, which is not over).
 */
export function computedOpenedDays(query: ReportScope, afterStored: boolean): Prisma.Sql {
  const days = dayRangeInstants(query);
  // Every day through --to not stored yet, T's own day included (it is not over: never stored).
  const rest = afterStored
    ? unstored(query, Prisma.sql`COALESCE(${query.to ?? null}::date, 'infinity'::date)`)
    : undefined;
  // T's own day starts less than 26 hours before T, in any zone.
  const notStoredFrom =
    rest === undefined ? undefined : Prisma.sql`LEAST(${rest.from}, ${at(query)} - interval '26 hours')`;
  const from = laterOf(days.from, notStoredFrom);
  // Slots first seen by T in the days asked for: packed days whose first sightings lie outside are skipped (by
  // the index of their last sighting, for the few days after the stored ones).
  const slots = slotRecords({
    connectionId: query.connectionId,
    connectionIds: rest?.ids,
    seenBy: at(query),
    seenFrom: from,
    seenUntil: days.until,
  });
  const day = localDay(query, firstSeenAt);
  // first_synced_at, not the oldest run kept: old runs are pruned (store/retention.ts).
  return Prisma.sql`
    SELECT s.connection_id, ${day} AS day, COUNT(*)::int AS opened
    FROM ${slots} s JOIN connection c ON c.id = s.connection_id
    WHERE c.first_synced_at IS NOT NULL AND s.first_seen_at <= ${at(query)} AND s.first_seen_at > c.first_synced_at
      ${rest === undefined ? Prisma.empty : Prisma.sql`AND c.id = ANY(${rest.ids}) AND (${day} >= ${localDay(query, at(query))} OR ${day} > COALESCE(${storedThrough}, '-infinity'::date))`}
      ${scopeFilter(query, 's')} ${dayRangeFilter(query, firstSeenAt)}
    GROUP BY 1, 2`;
}

/** What a stored opened day holds besides its connection and day: computedOpenedDays's column. */
export const OPENED_FIGURES = ['opened'] as const;

async function bookingsPerPeriod(
  prisma: ReportDb,
  query: ReportScope,
  by: 'day' | 'week',
): Promise<PeriodRow[]> {
  const openedDays = readsStoredDays(query)
    ? Prisma.sql`(${storedDays(query, 'opened_day', OPENED_FIGURES)}) UNION ALL (${computedOpenedDays(query, true)})`
    : computedOpenedDays(query, false);
  const openedPeriod =
    by === 'week' ? Prisma.sql`date_trunc('week', d.day::timestamp)::date` : Prisma.sql`d.day`;
  return prisma.$queryRaw<PeriodRow[]>(Prisma.sql`
    WITH booked AS (
      SELECT b.connection_id, ${period(query, by, detectedAt)} AS period, COUNT(*)::int AS bookings,
             (SUM(EXTRACT(EPOCH FROM (b.ends_at - b.starts_at))) / 60)::float8 AS booked_minutes,
             (percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (b.starts_at - b.detected_at)))
               / 3600)::float8 AS median_lead_hours,
             (AVG(EXTRACT(EPOCH FROM (b.starts_at - b.detected_at))) / 3600)::float8 AS mean_lead_hours
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)}
      GROUP BY 1, 2
    ), opened AS (
      -- A week's opened slots are its days' (stored or computed), added up.
      SELECT d.connection_id, ${openedPeriod} AS period, SUM(d.opened)::int AS opened
      FROM (${openedDays}) d GROUP BY 1, 2
    )
    SELECT COALESCE(b.connection_id, o.connection_id)::text AS connection_id, ${connectionName} AS connection,
           COALESCE(b.period, o.period) AS period, COALESCE(b.bookings, 0) AS bookings, b.booked_minutes,
           b.median_lead_hours, b.mean_lead_hours, COALESCE(o.opened, 0) AS opened
    FROM booked b FULL JOIN opened o ON o.connection_id = b.connection_id AND o.period = b.period
    JOIN connection c ON c.id = COALESCE(b.connection_id, o.connection_id)
    ORDER BY connection, 1, period`);
}

export interface WeekdayHourCell {
  weekday: number;
  hour: number;
  bookings: number;
}

export async function bookingsByWeekdayHour(
  prisma: ReportDb,
  query: ReportScope,
): Promise<WeekdayHourCell[]> {
  const local = Prisma.sql`(b.starts_at AT TIME ZONE ${zoneOf(query)})`;
  return prisma.$queryRaw<WeekdayHourCell[]>(Prisma.sql`
    SELECT EXTRACT(ISODOW FROM ${local})::int AS weekday, EXTRACT(HOUR FROM ${local})::int AS hour,
           COUNT(*)::int AS bookings
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}
    GROUP BY 1, 2 ORDER BY 1, 2`);
}

export interface BookingTotals {
  bookings: number;
  booked_minutes: number | null;
  median_lead_hours: number | null;
  mean_lead_hours: number | null;
}

async function bookingTotals(prisma: ReportDb, query: ReportScope): Promise<BookingTotals> {
  const [row] = await prisma.$queryRaw<BookingTotals[]>(Prisma.sql`
    SELECT COUNT(*)::int AS bookings,
           (SUM(EXTRACT(EPOCH FROM (b.ends_at - b.starts_at))) / 60)::float8 AS booked_minutes,
           (percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (b.starts_at - b.detected_at)))
             / 3600)::float8 AS median_lead_hours,
           (AVG(EXTRACT(EPOCH FROM (b.starts_at - b.detected_at))) / 3600)::float8 AS mean_lead_hours
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}`);
  return row ?? { bookings: 0, booked_minutes: null, median_lead_hours: null, mean_lead_hours: null };
}

/** What the bookings report reads for a grouping: the heat map's cells and the totals, and its rows. */
export type BookingsRows = { cells: WeekdayHourCell[]; totals: BookingTotals } & (
  | { by: 'weekday-hour' }
  | { by: 'booking'; bookings: BookingRow[] }
  | { by: 'day' | 'week'; periods: PeriodRow[] }
);

export async function bookingsRows(
  prisma: ReportDb,
  query: ReportScope & { by: BookingsGrouping },
): Promise<BookingsRows> {
  const [cells, totals] = await Promise.all([
    bookingsByWeekdayHour(prisma, query),
    bookingTotals(prisma, query),
  ]);
  if (query.by === 'weekday-hour') return { by: query.by, cells, totals };
  if (query.by === 'booking')
    return { by: query.by, cells, totals, bookings: await eachBooking(prisma, query) };
  return { by: query.by, cells, totals, periods: await bookingsPerPeriod(prisma, query, query.by) };
}
