// utilization: for past local days, the share of the time offered for booking that was booked, per connection.
// Offered and booked time are measured with the query (store/report-queries/utilization-rows.ts); the share
// = booked ÷ offered lies between 0 and 1, rounded to 4 decimals.
import type { ReportStore } from '../store/reports.js';
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

export async function utilizationReport(reports: ReportStore, query: ReportQuery): Promise<ReportResult> {
  const rows = await reports.utilization(query);
  const out: ReportRow[] = rows.map((r) => ({
    connection_id: r.connection_id,
    connection: r.connection,
    day: r.day,
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
