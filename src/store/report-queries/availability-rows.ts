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
import { Prisma } from '../../generated/prisma/client.js';
import { slotRecords } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import {
  at,
  connectionName,
  dayRangeFilter,
  dayRangeInstants,
  localDay,
  scopeFilter,
  type ReportDb,
  eventTitleAsOf,
} from './report-sql.js';

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

export async function availabilityRows(prisma: ReportDb, query: ReportScope): Promise<AvailabilityRow[]> {
  const startsAt = Prisma.sql`s.starts_at`;
  const days = dayRangeInstants(query);
  // Only slots still ahead at T, first seen by then: packed days before T's are skipped.
  const slots = slotRecords({
    connectionId: query.connectionId,
    startsFrom: days.from === undefined ? at(query) : Prisma.sql`GREATEST(${at(query)}, ${days.from})`,
    startsUntil: days.until,
    seenBy: at(query),
  });
  return prisma.$queryRaw<AvailabilityRow[]>(Prisma.sql`
    WITH open_slots AS (
      SELECT s.connection_id, s.upstream_event_id, ${localDay(query, startsAt)} AS day,
             COUNT(*)::int AS free_slots,
             (SUM(EXTRACT(EPOCH FROM (s.ends_at - s.starts_at))) / 60)::float8 AS free_minutes
      FROM ${slots} s JOIN connection c ON c.id = s.connection_id
      WHERE s.first_seen_at <= ${at(query)}
        AND (s.gone_at IS NULL OR s.gone_at > ${at(query)})
        AND s.starts_at > ${at(query)}
        ${scopeFilter(query, 's')}
        ${dayRangeFilter(query, startsAt)}
      GROUP BY 1, 2, 3
    )
    SELECT o.connection_id::text AS connection_id, ${connectionName} AS connection,
           o.upstream_event_id AS event_id, et.title AS event, o.day, o.free_slots, o.free_minutes
    FROM open_slots o
    JOIN connection c ON c.id = o.connection_id
    ${eventTitleAsOf(query, 'o')}
    ORDER BY connection, o.connection_id, event NULLS LAST, o.upstream_event_id, o.day`);
}
