// availability: per connection, event type and local day, the free slots and free minutes as of an instant
// T (now, or --at). What counts as free is decided with the query (store/report-queries/availability-rows.ts);
// this shapes its rows into the report.
import type { ReportStore } from '../store/reports.js';
import { dayTotalsOf, dayTotalsRead, rowsIn, summedOver } from './day-totals.js';
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

/** The figures summed per day and in the summary. */
const FIGURES = ['free_slots', 'free_minutes'] as const;

/** The report; only its first `firstRows` rows where given, with its row count and day totals over every row. */
export async function availabilityReport(
  reports: ReportStore,
  query: ReportQuery,
  firstRows?: number,
): Promise<ReportResult> {
  const read = await reports.availability(firstRows === undefined ? query : { ...query, firstRows });
  const out: ReportRow[] = read.rows.map((r) => ({
    connection_id: r.connection_id,
    connection: r.connection,
    event_id: r.event_id,
    event: r.event ?? r.event_id,
    day: dayString(r.day),
    free_slots: r.free_slots,
    free_minutes: numberOrNull(r.free_minutes, 2),
  }));
  const days = read.days === undefined ? dayTotalsOf(out, FIGURES) : dayTotalsRead(read.days, FIGURES);
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
    ...(read.days === undefined ? {} : { rowCount: rowsIn(days) }),
    dayTotals: days,
    summary: [
      { key: 'free_slots', label: 'free slots', value: summedOver(days, 'free_slots'), kind: 'integer' },
      {
        key: 'free_minutes',
        label: 'free minutes',
        value: summedOver(days, 'free_minutes'),
        kind: 'integer',
      },
    ],
    emptyMessage: `No free slots as of ${instantWording(query.at)} for this selection.`,
  };
}
