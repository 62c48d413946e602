// availability: per connection, event type and local day, the free slots and free minutes as of an instant
// T (now, or --at). What counts as free is decided with the query (store/report-queries/availability-rows.ts);
// this shapes its rows into the report.
import type { ReportStore } from '../store/reports.js';
import type { ReportQuery } from './report-query.js';
import {
  dayString,
  numberOrNull,
  rangeWording,
  zoneWording,
  type ReportResult,
  type ReportRow,
  instantWording,
} from './report-result.js';

export async function availabilityReport(reports: ReportStore, query: ReportQuery): Promise<ReportResult> {
  const rows = await reports.availability(query);
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
