// The bookings report's figures per local day (store/report-queries/bookings-rows.ts says what each figure
// counts), worked out from the history: the bookings detected on the day and the slots that opened on it. The
// retention run stores them once a day is over (store/report-days.ts); the report reads those and works out the rest.
import { Prisma } from '../../generated/prisma/client.js';
import { slotRecords } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import { laterOf, storedThrough, unstoredParts, type ComputedPart } from './stored-days.js';
import { at, bookedWhere, dayRangeFilter, dayRangeInstants, localDay, scopeFilter } from './report-sql.js';

const detectedAt = Prisma.sql`b.detected_at`;
const firstSeenAt = Prisma.sql`s.first_seen_at`;

/** A period's booking figures over `booking b JOIN connection c` rows grouped by it. */
export const BOOKED_FIGURES_SQL = Prisma.sql`COUNT(*)::int AS bookings,
  (SUM(EXTRACT(EPOCH FROM (b.ends_at - b.starts_at))) / 60)::float8 AS booked_minutes,
  (percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (b.starts_at - b.detected_at)))
    / 3600)::float8 AS median_lead_hours,
  (AVG(EXTRACT(EPOCH FROM (b.starts_at - b.detected_at))) / 3600)::float8 AS mean_lead_hours`;

/**
 * Each local day's bookings and opened slots (connection_id, day, bookings, booked_minutes, median_lead_hours,
 * mean_lead_hours, opened), for days with either: bookings by the day they were detected; opened slots by the day
 * they were first seen, after the connection's first sync (what that sync found was open already), by T. With
 * `afterStored`, only the days not stored (after the stored ones, and T's own day, which is not over). With
 * `openedOnly`, only the days with opened slots, and only (connection_id, day, opened): no booking is read.
 */
export function computedBookingDays(
  query: ReportScope,
  afterStored: boolean,
  openedOnly = false,
): Prisma.Sql {
  if (!afterStored) return computedDaysOf(query, undefined, openedOnly);
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
  return Prisma.sql`(${computedDaysOf(query, fromToday, openedOnly)})
    UNION ALL (${computedDaysOf(query, none, openedOnly)})`;
}

/** computedBookingDays for every connection (`rest` undefined), or for a part after its stored days. */
function computedDaysOf(query: ReportScope, rest: ComputedPart | undefined, openedOnly: boolean): Prisma.Sql {
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
  const opened = Prisma.sql`
      SELECT s.connection_id, ${openedDay} AS day, COUNT(*)::int AS opened
      FROM ${slots} s JOIN connection c ON c.id = s.connection_id
      WHERE c.first_synced_at IS NOT NULL AND s.first_seen_at <= ${at(query)}
        AND s.first_seen_at > c.first_synced_at ${notStored(openedDay)}
        ${scopeFilter(query, 's')} ${dayRangeFilter(query, firstSeenAt)}
      GROUP BY 1, 2`;
  if (openedOnly) return opened;
  return Prisma.sql`
    WITH booked AS (
      SELECT b.connection_id, ${bookedDay} AS day, ${BOOKED_FIGURES_SQL}
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE ${bookedWhere(query)} ${notStored(bookedDay)}
        ${from === undefined ? Prisma.empty : Prisma.sql`AND b.detected_at >= ${from}`}
      GROUP BY 1, 2
    ), opened AS (${opened})
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
