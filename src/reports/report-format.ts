// A report as a terminal table, as CSV (RFC 4180: CRLF line ends, quotes doubled, header row of column keys)
// or as JSON. Pure functions of a ReportResult.
import { secondsLabel } from '../lib/duration-label.js';
import { formatTable } from '../lib/text-table.js';
import { instantWording, type ColumnKind, type ReportResult, type ReportValue } from './report-result.js';

export const REPORT_FORMATS = ['table', 'csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export function formatValue(value: ReportValue, kind: ColumnKind): string {
  if (value === null) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (kind === 'instant' && typeof value === 'string') return instantWording(new Date(value));
  if (typeof value === 'string') return value;
  switch (kind) {
    case 'percent':
      return `${(value * 100).toFixed(1)} %`;
    // One precision down a column (sync-health's calls/run printed 48.57 beside 29.7); CSV and JSON keep more.
    case 'hours':
    case 'seconds':
    case 'number':
      return value.toFixed(1);
    case 'duration':
      return secondsLabel(value);
    case 'integer':
      return String(Math.round(value));
    default:
      return String(value);
  }
}

function csvCell(value: ReportValue): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function reportAsCsv(result: ReportResult): string {
  const keys = result.columns.map((c) => c.key);
  const lines = [
    keys.join(','),
    ...result.rows.map((row) => keys.map((k) => csvCell(row[k] ?? null)).join(',')),
  ];
  return lines.join('\r\n') + '\r\n';
}

export function reportAsJson(result: ReportResult): string {
  const { query } = result;
  return (
    JSON.stringify(
      {
        report: result.report,
        asOf: query.at.toISOString(),
        timezone: query.timezone ?? null,
        filters: {
          connection: query.connectionId ?? null,
          event: query.eventId ?? null,
          from: query.from ?? null,
          to: query.to ?? null,
          ...(result.report === 'bookings' ? { by: query.by } : {}),
        },
        rows: result.rows,
        summary: Object.fromEntries(result.summary.map((s) => [s.key, s.value])),
      },
      null,
      2,
    ) + '\n'
  );
}

/**
 * An instant in a table's cell: its UTC date and minute, which the caption of every table with one says is UTC
 * (`2026-11-23 10:30`). A cell is kept whole (a time cut to "Mon 23 Nov 2026, 1…" says nothing) and short, so a
 * table of two of them still fits 80 columns.
 */
const tableInstant = (value: ReportValue) =>
  typeof value === 'string'
    ? new Date(value).toISOString().slice(0, 16).replace('T', ' ')
    : formatValue(value, 'instant');

/** `width`: the terminal's columns (tables are fitted to it); undefined for full width. */
export function reportAsTable(result: ReportResult, width?: number): string {
  const columns = result.columns.filter((c) => c.inTable !== false);
  const header = `${result.title} — ${result.caption}\n`;
  if (result.rows.length === 0) return `${header}${result.emptyMessage}\n`;
  const keepWhole = columns.flatMap((c, i) => (c.kind === 'instant' ? [i] : []));
  const table = formatTable(
    columns.map((c) => c.label),
    result.rows.map((row) =>
      columns.map((c) =>
        c.kind === 'instant' ? tableInstant(row[c.key] ?? null) : formatValue(row[c.key] ?? null, c.kind),
      ),
    ),
    result.emptyMessage,
    width === undefined ? { keepWhole } : { width, keepWhole },
  );
  const summary = result.summary.map((s) => `${s.label}: ${formatValue(s.value, s.kind)}\n`).join('');
  return `${header}${table}${summary === '' ? '' : `\n${summary}`}`;
}

export function formatReport(result: ReportResult, format: ReportFormat, width?: number): string {
  switch (format) {
    case 'csv':
      return reportAsCsv(result);
    case 'json':
      return reportAsJson(result);
    case 'table':
      return reportAsTable(result, width);
  }
}
