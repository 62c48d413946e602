// availability: per connection, event type and local day, the free slots and free minutes as of an instant
// T (now, or --at), reconstructed from slot history.
//
// Semantics (decided here, relied on by tests and the admin chart):
// - A slot row was open at T when first_seen_at ≤ T and (gone_at IS NULL or gone_at > T): slotfeed had seen it
//   and not yet seen it vanish. Only slots still ahead at T (starts_at > T) count as free: a slot that has
//   started is no longer bookable, even if the next sync had not closed its row yet.
// - Free minutes are the sum of (ends_at − starts_at) over those slots, counted as offered, not merged: two
//   overlapping slots of one event type count twice (each could be booked; either booking removes both, which
//   the history then shows). Event types are never added together into one "free time" figure per row.
// - The day is the slot's start in the connection's zone (or --tz); --from/--to bound those days.
import { Prisma } from '../generated/prisma/client.js';
import type { ReportQuery } from './report-query.js';
import {
  at,
  connectionName,
  dayRangeFilter,
  localDay,
  scopeFilter,
  type ReportDb,
  eventTitleAsOf,
} from './report-sql.js';
import {
  dayString,
  numberOrNull,
  rangeWording,
  zoneWording,
  type ReportResult,
  type ReportRow,
  instantWording,
} from './report-result.js';

interface AvailabilityRow {
  connection_id: string;
  connection: string;
  event_id: string;
  event: string | null;
  day: Date | string;
  free_slots: number;
  free_minutes: number;
}

export async function availabilityReport(prisma: ReportDb, query: ReportQuery): Promise<ReportResult> {
  const startsAt = Prisma.sql`s.starts_at`;
  const rows = await prisma.$queryRaw<AvailabilityRow[]>(Prisma.sql`
    WITH open_slots AS (
      SELECT s.connection_id, s.upstream_event_id, ${localDay(query, startsAt)} AS day,
             COUNT(*)::int AS free_slots,
             (SUM(EXTRACT(EPOCH FROM (s.ends_at - s.starts_at))) / 60)::float8 AS free_minutes
      FROM slot s JOIN connection c ON c.id = s.connection_id
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

  const out: ReportRow[] = rows.map((r) => ({
    connection_id: r.connection_id,
    connection: r.connection,
    event_id: r.event_id,
    event: r.event ?? r.event_id,
    day: dayString(r.day),
    free_slots: r.free_slots,
    free_minutes: numberOrNull(r.free_minutes, 2),
  }));
  const totalSlots = out.reduce((sum, r) => sum + Number(r.free_slots), 0);
  const totalMinutes = out.reduce((sum, r) => sum + Number(r.free_minutes), 0);
  return {
    report: 'availability',
    title: 'Availability',
    caption: `free slots as of ${instantWording(query.at)}, ${zoneWording(query)}, ${rangeWording(query)}`,
    query,
    columns: [
      { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
      { key: 'connection', label: 'connection', kind: 'text' },
      { key: 'event_id', label: 'event id', kind: 'text', inTable: false },
      { key: 'event', label: 'event type', kind: 'text' },
      { key: 'day', label: 'day', kind: 'text' },
      { key: 'free_slots', label: 'free slots', kind: 'integer' },
      { key: 'free_minutes', label: 'free minutes', kind: 'integer' },
    ],
    rows: out,
    summary: [
      { key: 'free_slots', label: 'free slots', value: totalSlots, kind: 'integer' },
      { key: 'free_minutes', label: 'free minutes', value: totalMinutes, kind: 'integer' },
    ],
    emptyMessage: `No free slots as of ${instantWording(query.at)} for this selection.`,
  };
}
