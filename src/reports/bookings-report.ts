// bookings: bookings inferred from the snapshots, per local day or week, with their duration and lead time;
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
import { Prisma } from '../generated/prisma/client.js';
import type { BookingsGrouping, ReportQuery } from './report-query.js';
import {
  at,
  bookingScopeFilter,
  connectionName,
  dayRangeFilter,
  localDay,
  scopeFilter,
  zoneOf,
  type ReportDb,
} from './report-sql.js';
import {
  dayString,
  numberOrNull,
  rangeWording,
  zoneWording,
  type ReportColumn,
  type ReportResult,
  type ReportRow,
  type ReportSummaryItem,
  instantWording,
} from './report-result.js';

export const WEEKDAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

const detectedAt = Prisma.sql`b.detected_at`;
const firstSeenAt = Prisma.sql`s.first_seen_at`;

interface BookingRow {
  connection_id: string;
  connection: string;
  detected_at: Date;
  starts_at: Date;
  ends_at: Date;
  event_ids: string[];
  slots_closed: number;
}

/** Every booking, one row each: when it was seen, when it lies, how long it is, how far ahead it was made. */
async function eachBooking(prisma: ReportDb, query: ReportQuery): Promise<BookingRow[]> {
  return prisma.$queryRaw<BookingRow[]>(Prisma.sql`
    SELECT b.connection_id::text AS connection_id, ${connectionName} AS connection, b.detected_at, b.starts_at,
           b.ends_at, b.event_ids, b.slots_closed
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}
    ORDER BY connection, b.connection_id, b.starts_at, b.id`);
}

function period(query: ReportQuery, by: BookingsGrouping, instant: Prisma.Sql): Prisma.Sql {
  return by === 'week'
    ? Prisma.sql`date_trunc('week', (${instant}) AT TIME ZONE ${zoneOf(query)})::date`
    : localDay(query, instant);
}

/** Rows of `booking b JOIN connection c` known at T, within the query's connection, event type and days. */
function bookedWhere(query: ReportQuery): Prisma.Sql {
  return Prisma.sql`b.detected_at <= ${at(query)} ${bookingScopeFilter(query)} ${dayRangeFilter(query, detectedAt)}`;
}

interface PeriodRow {
  connection_id: string;
  connection: string;
  period: Date | string;
  bookings: number;
  booked_minutes: number | null;
  median_lead_hours: number | null;
  mean_lead_hours: number | null;
  opened: number;
}

async function bookingsPerPeriod(prisma: ReportDb, query: ReportQuery, by: 'day' | 'week') {
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
      -- Slots that opened after the first sync (those it found were open already). first_synced_at, not the
      -- oldest run kept: old runs are pruned (store/retention.ts).
      SELECT s.connection_id, ${period(query, by, firstSeenAt)} AS period, COUNT(*)::int AS opened
      FROM slot s JOIN connection c ON c.id = s.connection_id
      WHERE c.first_synced_at IS NOT NULL AND s.first_seen_at <= ${at(query)} AND s.first_seen_at > c.first_synced_at
        ${scopeFilter(query, 's')} ${dayRangeFilter(query, firstSeenAt)}
      GROUP BY 1, 2
    )
    SELECT COALESCE(b.connection_id, o.connection_id)::text AS connection_id, ${connectionName} AS connection,
           COALESCE(b.period, o.period) AS period, COALESCE(b.bookings, 0) AS bookings, b.booked_minutes,
           b.median_lead_hours, b.mean_lead_hours, COALESCE(o.opened, 0) AS opened
    FROM booked b FULL JOIN opened o ON o.connection_id = b.connection_id AND o.period = b.period
    JOIN connection c ON c.id = COALESCE(b.connection_id, o.connection_id)
    ORDER BY connection, 1, period`);
}

interface CellRow {
  weekday: number;
  hour: number;
  bookings: number;
}

export async function bookingsByWeekdayHour(prisma: ReportDb, query: ReportQuery): Promise<CellRow[]> {
  const local = Prisma.sql`(b.starts_at AT TIME ZONE ${zoneOf(query)})`;
  return prisma.$queryRaw<CellRow[]>(Prisma.sql`
    SELECT EXTRACT(ISODOW FROM ${local})::int AS weekday, EXTRACT(HOUR FROM ${local})::int AS hour,
           COUNT(*)::int AS bookings
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}
    GROUP BY 1, 2 ORDER BY 1, 2`);
}

async function bookingTotals(prisma: ReportDb, query: ReportQuery) {
  const [row] = await prisma.$queryRaw<
    {
      bookings: number;
      booked_minutes: number | null;
      median_lead_hours: number | null;
      mean_lead_hours: number | null;
    }[]
  >(Prisma.sql`
    SELECT COUNT(*)::int AS bookings,
           (SUM(EXTRACT(EPOCH FROM (b.ends_at - b.starts_at))) / 60)::float8 AS booked_minutes,
           (percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (b.starts_at - b.detected_at)))
             / 3600)::float8 AS median_lead_hours,
           (AVG(EXTRACT(EPOCH FROM (b.starts_at - b.detected_at))) / 3600)::float8 AS mean_lead_hours
    FROM booking b JOIN connection c ON c.id = b.connection_id
    WHERE ${bookedWhere(query)}`);
  return row ?? { bookings: 0, booked_minutes: null, median_lead_hours: null, mean_lead_hours: null };
}

/** The key with the largest total (the earliest on a tie), or null when nothing was booked. */
function busiest(cells: CellRow[], keyOf: (cell: CellRow) => number): number | null {
  const totals = new Map<number, number>();
  for (const cell of cells) totals.set(keyOf(cell), (totals.get(keyOf(cell)) ?? 0) + cell.bookings);
  let best: number | null = null;
  for (const [key, total] of [...totals].sort((a, b) => a[0] - b[0])) {
    if (best === null || total > (totals.get(best) ?? 0)) best = key;
  }
  return best;
}

const hourLabel = (hour: number) => `${String(hour).padStart(2, '0')}:00`;

export async function bookingsReport(prisma: ReportDb, query: ReportQuery): Promise<ReportResult> {
  const [cells, totals] = await Promise.all([
    bookingsByWeekdayHour(prisma, query),
    bookingTotals(prisma, query),
  ]);
  const weekday = busiest(cells, (c) => c.weekday);
  const hour = busiest(cells, (c) => c.hour);
  const summary: ReportSummaryItem[] = [
    { key: 'bookings', label: 'bookings', value: totals.bookings, kind: 'integer' },
    {
      key: 'booked_minutes',
      label: 'booked minutes',
      value: numberOrNull(totals.booked_minutes, 2) ?? 0,
      kind: 'integer',
    },
    {
      key: 'median_lead_hours',
      label: 'median lead time (hours)',
      value: numberOrNull(totals.median_lead_hours, 2),
      kind: 'hours',
    },
    {
      key: 'busiest_weekday',
      label: 'busiest weekday',
      value: weekday === null ? null : (WEEKDAY_NAMES[weekday - 1] ?? null),
      kind: 'text',
    },
    {
      key: 'busiest_hour',
      label: 'busiest hour',
      value: hour === null ? null : hourLabel(hour),
      kind: 'text',
    },
  ];
  const base = {
    report: 'bookings' as const,
    title: 'Bookings',
    query,
    summary,
    emptyMessage: `No bookings and no newly opened slots up to ${instantWording(query.at)} for this selection.`,
  };
  const wording = `${zoneWording(query)}, ${rangeWording(query)}, as of ${instantWording(query.at)}`;

  if (query.by === 'weekday-hour') {
    return {
      ...base,
      caption: `bookings by the weekday and hour they start, ${wording}`,
      columns: [
        { key: 'weekday', label: 'weekday', kind: 'integer', inTable: false },
        { key: 'weekday_name', label: 'weekday', kind: 'text' },
        { key: 'hour', label: 'hour', kind: 'integer' },
        { key: 'bookings', label: 'bookings', kind: 'integer' },
      ],
      rows: cells.map((c) => ({
        weekday: c.weekday,
        weekday_name: WEEKDAY_NAMES[c.weekday - 1] ?? String(c.weekday),
        hour: c.hour,
        bookings: c.bookings,
      })),
      emptyMessage: `No bookings up to ${instantWording(query.at)} for this selection.`,
    };
  }

  if (query.by === 'booking') {
    const bookings = await eachBooking(prisma, query);
    const minutes = (b: BookingRow) => (b.ends_at.getTime() - b.starts_at.getTime()) / 60_000;
    return {
      ...base,
      caption: `each inferred booking, ${wording}`,
      columns: [
        { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
        { key: 'connection', label: 'connection', kind: 'text' },
        { key: 'starts_at', label: 'starts', kind: 'text' },
        { key: 'minutes', label: 'minutes', kind: 'integer' },
        { key: 'lead_hours', label: 'lead (h)', kind: 'hours' },
        { key: 'event_ids', label: 'event types', kind: 'text' },
        { key: 'detected_at', label: 'seen', kind: 'text', inTable: false },
        { key: 'slots_closed', label: 'slots closed', kind: 'integer', inTable: false },
      ],
      rows: bookings.map((b) => ({
        connection_id: b.connection_id,
        connection: b.connection,
        starts_at: b.starts_at.toISOString(),
        minutes: minutes(b),
        lead_hours: numberOrNull((b.starts_at.getTime() - b.detected_at.getTime()) / 3_600_000, 2),
        event_ids: b.event_ids.join(' '),
        detected_at: b.detected_at.toISOString(),
        slots_closed: b.slots_closed,
      })),
      emptyMessage: `No bookings up to ${instantWording(query.at)} for this selection.`,
    };
  }

  const periods = await bookingsPerPeriod(prisma, query, query.by);
  const periodKey = query.by === 'week' ? 'week' : 'day';
  const columns: ReportColumn[] = [
    { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
    { key: 'connection', label: 'connection', kind: 'text' },
    { key: periodKey, label: query.by === 'week' ? 'week of' : 'day', kind: 'text' },
    { key: 'bookings', label: 'bookings', kind: 'integer' },
    { key: 'booked_minutes', label: 'booked minutes', kind: 'integer' },
    { key: 'median_lead_hours', label: 'median lead (h)', kind: 'hours' },
    { key: 'mean_lead_hours', label: 'mean lead (h)', kind: 'hours' },
    { key: 'opened', label: 'opened slots', kind: 'integer' },
  ];
  const rows: ReportRow[] = periods.map((p) => ({
    connection_id: p.connection_id,
    connection: p.connection,
    [periodKey]: dayString(p.period),
    bookings: p.bookings,
    booked_minutes: numberOrNull(p.booked_minutes, 2) ?? 0,
    median_lead_hours: numberOrNull(p.median_lead_hours, 2),
    mean_lead_hours: numberOrNull(p.mean_lead_hours, 2),
    opened: p.opened,
  }));
  return {
    ...base,
    caption: `inferred bookings, by the ${periodKey} they were first seen; ${wording}`,
    columns,
    rows,
    summary: [
      ...summary,
      {
        key: 'opened',
        label: 'opened slots',
        value: rows.reduce((n, r) => n + Number(r.opened), 0),
        kind: 'integer',
      },
    ],
  };
}
