// The bookings report's rows per local day or week (store/report-queries/bookings-rows.ts says what each
// figure counts): the bookings detected in the period and the slots that opened in it.
import { Prisma } from '../../generated/prisma/client.js';
import { slotRecords } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import { laterOf, readsStoredDays, storedDays, storedThrough, unstored } from './stored-days.js';
import {
  at,
  bookedWhere,
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
  // Slots first seen by T in the days asked for (and so starting after their first day): packed days whose
  // first sightings lie outside are skipped.
  const slots = slotRecords({
    connectionId: query.connectionId,
    connectionIds: rest?.ids,
    seenBy: at(query),
    seenFrom: from,
    seenUntil: days.until,
    startsFrom: from,
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

export async function bookingsPerPeriod(
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
