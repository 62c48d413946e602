// utilization: for past local days, the share of the time offered for booking that was booked, per connection.
// Offered and booked time are measured with the query (store/report-queries/utilization-rows.ts); the share
// = booked ÷ offered lies between 0 and 1, rounded to 4 decimals.
import type { ReportStore } from '../store/reports.js';
import { dayTotalsOf, dayTotalsRead, rowsIn, summedOver } from './day-totals.js';
import type { ReportQuery } from './report-query.js';
import {
  instantWording,
  numberOrNull,
  rangeWording,
  roundTo,
  zoneWording,
  type ReportResult,
  type ReportRow,
} from './report-result.js';

/** The figures summed per day and in the summary. */
const FIGURES = ['offered_minutes', 'bookings', 'booked_minutes'] as const;

/** The report; only its first `firstRows` rows where given, with its row count and day totals over every row. */
export async function utilizationReport(
  reports: ReportStore,
  query: ReportQuery,
  firstRows?: number,
): Promise<ReportResult> {
  const read = await reports.utilization(firstRows === undefined ? query : { ...query, firstRows });
  const out: ReportRow[] = read.rows.map((r) => ({
    connection_id: r.connection_id,
    connection: r.connection,
    day: r.day,
    offered_minutes: numberOrNull(r.offered_minutes, 2) ?? 0,
    bookings: r.bookings,
    booked_minutes: numberOrNull(r.booked_minutes, 2) ?? 0,
    share: r.offered_minutes > 0 ? roundTo(Math.min(1, r.booked_minutes / r.offered_minutes), 4) : null,
  }));
  const days = read.days === undefined ? dayTotalsOf(out, FIGURES) : dayTotalsRead(read.days, FIGURES);
  const offered = summedOver(days, 'offered_minutes');
  const booked = summedOver(days, 'booked_minutes');
  const bookings = summedOver(days, 'bookings');
  return {
    report: 'utilization',
    title: 'Utilization',
    caption: `share of offered time booked, past days before ${instantWording(query.at)}, ${zoneWording(query)}, ${rangeWording(query)}`,
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
    ...(read.days === undefined ? {} : { rowCount: rowsIn(days) }),
    dayTotals: days,
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
