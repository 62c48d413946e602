// sync-health: per connection, how its syncs went: runs, success rate, median and p95 duration, upstream calls
// per run, the staleness p95 per date band, the last error, and whether it needs re-authorisation. What is
// counted, and over which runs, is decided with the query (store/report-queries/sync-health-rows.ts); this
// shapes its rows into the report: one staleness column per date band (lib/date-bands.ts).
import type { ReportStore } from '../store/reports.js';
import { DATE_BANDS } from '../lib/date-bands.js';
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

/** The report column of a date band's staleness p95: stale_p95_0_24h, stale_p95_1_3d, … */
const staleKey = (band: string) => `stale_p95_${band.replace(/[^a-z0-9]+/gi, '_').replace(/_$/, '')}`;

export async function syncHealthReport(reports: ReportStore, query: ReportQuery): Promise<ReportResult> {
  const rows = await reports.syncHealth(query);
  const out: ReportRow[] = rows.map((r) => ({
    connection_id: r.connection_id,
    connection: r.connection,
    status: r.status,
    needs_reauth: r.status === 'needs_reauth',
    runs: r.runs,
    success_rate: r.runs === 0 ? null : roundTo(r.succeeded / r.runs, 4),
    superseded: r.superseded,
    interrupted: r.interrupted,
    median_seconds: numberOrNull(r.median_seconds, 3),
    p95_seconds: numberOrNull(r.p95_seconds, 3),
    calls_per_run: numberOrNull(r.calls_per_run, 2),
    ...Object.fromEntries(
      DATE_BANDS.map((band) => [staleKey(band.name), numberOrNull(r.stale_p95?.[band.name] ?? null, 0)]),
    ),
    last_error: r.last_error,
    last_error_at: r.last_error_at === null ? null : new Date(r.last_error_at).toISOString(),
  }));
  const needingReauth = out.filter((r) => r.needs_reauth).map((r) => String(r.connection));
  return {
    report: 'sync-health',
    title: 'Sync health',
    caption: `sync runs started up to ${instantWording(query.at)}, ${zoneWording(query)}, ${rangeWording(query)}`,
    query,
    columns: [
      { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
      { key: 'connection', label: 'connection', kind: 'text' },
      { key: 'status', label: 'status', kind: 'text' },
      { key: 'needs_reauth', label: 're-auth', kind: 'text', inTable: false },
      { key: 'runs', label: 'runs', kind: 'integer' },
      { key: 'success_rate', label: 'success', kind: 'percent' },
      { key: 'superseded', label: 'superseded', kind: 'integer', inTable: false },
      { key: 'interrupted', label: 'interrupted', kind: 'integer', inTable: false },
      { key: 'median_seconds', label: 'median s', kind: 'seconds' },
      { key: 'p95_seconds', label: 'p95 s', kind: 'seconds' },
      { key: 'calls_per_run', label: 'calls/run', kind: 'number' },
      // The near bands, where staleness costs, in the table; all four in CSV and JSON.
      ...DATE_BANDS.map((band, i) => ({
        key: staleKey(band.name),
        label: `stale ${band.name} p95`,
        kind: 'duration' as const,
        ...(i < 2 ? {} : { inTable: false }),
      })),
      { key: 'last_error_at', label: 'last error at', kind: 'instant', inTable: false },
      { key: 'last_error', label: 'last error', kind: 'text' },
    ],
    rows: out,
    summary: [
      {
        key: 'needs_reauth',
        label: 'needing re-authorisation',
        value: needingReauth.length === 0 ? 'none' : needingReauth.join(', '),
        kind: 'text',
      },
    ],
    emptyMessage: query.connectionId === undefined ? 'No connections yet.' : 'No such connection.',
  };
}
