// utilization: for past local days, the share of the time offered for booking that was booked, per connection.
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
import { Prisma } from '../generated/prisma/client.js';
import type { ReportQuery } from './report-query.js';
import {
  at,
  bookingScopeFilter,
  connectionName,
  dayRangeFilter,
  localDay,
  scopeFilter,
  type ReportDb,
} from './report-sql.js';
import {
  dayString,
  numberOrNull,
  rangeWording,
  roundTo,
  zoneWording,
  type ReportResult,
  type ReportRow,
} from './report-result.js';

interface UtilizationRow {
  connection_id: string;
  connection: string;
  day: Date | string;
  offered_minutes: number;
  bookings: number;
  booked_minutes: number;
}

export async function utilizationReport(prisma: ReportDb, query: ReportQuery): Promise<ReportResult> {
  const startsAt = Prisma.sql`s.starts_at`;
  const bookingStartsAt = Prisma.sql`b.starts_at`;
  // One pass over the slot rows, grouped by local day: the day's offered time is the union of its slots'
  // intervals (range_agg merges the overlaps of event types and of a slot's several rows).
  const rows = await prisma.$queryRaw<UtilizationRow[]>(Prisma.sql`
    WITH zones AS (
      SELECT c.id, c.timezone, ${localDay(query, at(query))} AS today FROM connection c
    ), offered AS (
      SELECT s.connection_id, ${localDay(query, startsAt)} AS day, c.today,
             range_agg(tstzrange(s.starts_at, s.ends_at)) AS spans,
             -- Time a slot still offered when it started (as known at T): whatever was booked there and
             -- cancelled again was free when the time came.
             COALESCE(range_agg(tstzrange(s.starts_at, s.ends_at)) FILTER (
               WHERE s.gone_at IS NULL OR s.gone_at > ${at(query)} OR s.gone_at >= s.starts_at),
               '{}'::tstzmultirange) AS open_at_start
      FROM slot s JOIN zones c ON c.id = s.connection_id
      WHERE s.first_seen_at <= ${at(query)} AND s.first_seen_at < s.starts_at
        AND s.starts_at < ${at(query)}
        ${scopeFilter(query, 's')}
        ${dayRangeFilter(query, startsAt)}
      GROUP BY 1, 2, 3
    ), booked AS (
      SELECT b.connection_id, ${localDay(query, bookingStartsAt)} AS day, COUNT(*)::int AS bookings,
             range_agg(tstzrange(b.starts_at, b.ends_at)) AS spans
      FROM booking b JOIN connection c ON c.id = b.connection_id
      WHERE b.detected_at <= ${at(query)} AND b.starts_at < ${at(query)}
        ${bookingScopeFilter(query)}
        ${dayRangeFilter(query, bookingStartsAt)}
      GROUP BY 1, 2
    )
    SELECT o.connection_id::text AS connection_id, ${connectionName} AS connection, o.day,
           ((SELECT SUM(EXTRACT(EPOCH FROM (upper(r) - lower(r)))) FROM unnest(o.spans) r) / 60)::float8
             AS offered_minutes,
           COALESCE(b.bookings, 0) AS bookings,
           COALESCE((SELECT SUM(EXTRACT(EPOCH FROM (upper(r) - lower(r))))
                     FROM unnest(b.spans * o.spans - o.open_at_start) r) / 60, 0)::float8 AS booked_minutes
    FROM offered o
    JOIN connection c ON c.id = o.connection_id
    LEFT JOIN booked b ON b.connection_id = o.connection_id AND b.day = o.day
    WHERE o.day < o.today
    ORDER BY connection, o.connection_id, o.day`);

  const out: ReportRow[] = rows.map((r) => ({
    connection_id: r.connection_id,
    connection: r.connection,
    day: dayString(r.day),
    offered_minutes: numberOrNull(r.offered_minutes, 2) ?? 0,
    bookings: r.bookings,
    booked_minutes: numberOrNull(r.booked_minutes, 2) ?? 0,
    share: r.offered_minutes > 0 ? roundTo(Math.min(1, r.booked_minutes / r.offered_minutes), 4) : null,
  }));
  const offered = out.reduce((n, r) => n + Number(r.offered_minutes), 0);
  const booked = out.reduce((n, r) => n + Number(r.booked_minutes), 0);
  const bookings = out.reduce((n, r) => n + Number(r.bookings), 0);
  return {
    report: 'utilization',
    title: 'Utilization',
    caption: `share of offered time booked, past days before ${query.at.toISOString()}, ${zoneWording(query)}, ${rangeWording(query)}`,
    query,
    columns: [
      { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
      { key: 'connection', label: 'connection', kind: 'text' },
      { key: 'day', label: 'day', kind: 'text' },
      { key: 'offered_minutes', label: 'offered min', kind: 'integer' },
      { key: 'bookings', label: 'bookings', kind: 'integer' },
      { key: 'booked_minutes', label: 'booked min', kind: 'integer' },
      { key: 'share', label: 'booked share', kind: 'percent' },
    ],
    rows: out,
    summary: [
      { key: 'offered_minutes', label: 'offered minutes', value: offered, kind: 'integer' },
      { key: 'bookings', label: 'bookings', value: bookings, kind: 'integer' },
      { key: 'booked_minutes', label: 'booked minutes', value: booked, kind: 'integer' },
      {
        key: 'share',
        label: 'booked share',
        value: offered === 0 ? null : numberOrNull(Math.min(1, booked / offered), 4),
        kind: 'percent',
      },
    ],
    emptyMessage: 'No past days with offered time for this selection.',
  };
}
