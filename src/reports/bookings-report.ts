// bookings: the inferred bookings per local day or week, each booking, or when the booked time lies (weekday ×
// hour, the admin's heat map), with their totals, busiest weekday and hour. What a booking is, and which period
// it falls in, is decided with the queries (store/report-queries/bookings-rows.ts); this shapes their rows.
import type { BookingRow, ReportStore, WeekdayHourCell } from '../store/reports.js';
import type { ReportQuery } from './report-query.js';
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

/** The key with the largest total (the earliest on a tie), or null when nothing was booked. */
function busiest(cells: WeekdayHourCell[], keyOf: (cell: WeekdayHourCell) => number): number | null {
  const totals = new Map<number, number>();
  for (const cell of cells) totals.set(keyOf(cell), (totals.get(keyOf(cell)) ?? 0) + cell.bookings);
  let best: number | null = null;
  for (const [key, total] of [...totals].sort((a, b) => a[0] - b[0])) {
    if (best === null || total > (totals.get(best) ?? 0)) best = key;
  }
  return best;
}

const hourLabel = (hour: number) => `${String(hour).padStart(2, '0')}:00`;

/**
 * The bookings report; by booking, day or week, only its first `firstRows` rows where given (with how many it has,
 * and its summary over every row all the same).
 */
export async function bookingsReport(
  reports: ReportStore,
  query: ReportQuery,
  firstRows?: number,
): Promise<ReportResult> {
  const read = await reports.bookings(firstRows === undefined ? query : { ...query, firstRows });
  const rowCount = read.counted === undefined ? {} : { rowCount: read.counted.rows };
  const { cells, totals } = read;
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

  if (read.by === 'weekday-hour') {
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

  if (read.by === 'booking') {
    const { bookings } = read;
    const minutes = (b: BookingRow) => (b.ends_at.getTime() - b.starts_at.getTime()) / 60_000;
    return {
      ...base,
      // Its instants are written in UTC (instantWording) while the range's days may be each connection's: say both.
      caption: `each inferred booking, its start and when it was seen in UTC; ${wording}`,
      columns: [
        { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
        { key: 'connection', label: 'connection', kind: 'text' },
        { key: 'starts_at', label: 'starts', kind: 'instant' },
        { key: 'minutes', label: 'minutes', kind: 'integer' },
        { key: 'lead_hours', label: 'lead (h)', kind: 'hours' },
        { key: 'event_ids', label: 'event types', kind: 'text' },
        // In the table too: its caption says when each booking was seen.
        { key: 'detected_at', label: 'seen', kind: 'instant' },
        { key: 'slots_closed', label: 'slots closed', kind: 'integer', inTable: false },
      ],
      ...rowCount,
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

  const { periods } = read;
  const periodKey = read.by === 'week' ? 'week' : 'day';
  const columns: ReportColumn[] = [
    { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
    { key: 'connection', label: 'connection', kind: 'text' },
    { key: periodKey, label: read.by === 'week' ? 'week of' : 'day', kind: 'text' },
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
    ...rowCount,
    summary: [
      ...summary,
      {
        key: 'opened',
        label: 'opened slots',
        value: read.counted?.opened ?? rows.reduce((n, r) => n + Number(r.opened), 0),
        kind: 'integer',
      },
    ],
  };
}
