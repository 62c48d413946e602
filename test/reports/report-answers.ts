// Every report's answer over a history (mixed-history.ts), in every format, and the admin page's reads of the
// same history: what compact-history.test.ts and compact-history-migration.test.ts compare between two forms of
// it. The lists of reports, groupings and formats are the code's own, so a new one is compared too.
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import type { TestDatabase } from '../support/db.js';
import { REPORT_FORMATS, formatReport } from '../../src/reports/report-format.js';
import {
  BOOKINGS_GROUPINGS,
  REPORT_NAMES,
  parseReportQuery,
  type RawReportQuery,
  type ReportName,
} from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createConnectionDetailStore } from '../../src/store/connection-detail.js';
import { createReportStore } from '../../src/store/reports.js';
import { RELATIVE_ERROR } from '../../src/lib/log-histogram.js';
import { HISTORY_NOW } from './mixed-history.js';

const DAY_MS = 86_400_000;

export interface ReportCase {
  name: ReportName;
  label: string;
  raw: RawReportQuery;
}

/** Every report, grouping and scope the CLI and admin pages offer, over this history. */
export function reportCases(ids: { connections: string[]; eventId: string }): ReportCase[] {
  const [berlin, kolkata] = ids.connections;
  const scopes: [string, RawReportQuery][] = [
    ['all connections', {}],
    ['one connection', { connection: berlin }],
    ['another connection, another zone', { connection: kolkata, tz: 'Asia/Kathmandu' }],
    ['local days', { from: '2026-08-10', to: '2026-09-05' }],
    ['a past instant', { at: '2026-09-01T07:13:21.456Z' }],
    [
      'a past instant, days and zone',
      { at: '2026-09-12T23:59:59.999Z', from: '2026-08-30', tz: 'Pacific/Chatham' },
    ],
    ['an event type', { event: ids.eventId }],
    ['days after the packed ones', { from: '2026-09-19' }],
    ['a past instant within --to', { at: '2026-09-03T12:00:00Z', to: '2026-09-06' }],
  ];
  const all: ReportCase[] = [];
  for (const name of REPORT_NAMES) {
    for (const [label, raw] of scopes) {
      if (name === 'sync-health' && raw.event !== undefined) continue; // --event does not apply to it
      const groupings = name === 'bookings' ? BOOKINGS_GROUPINGS : [undefined];
      for (const by of groupings)
        all.push({ name, label: by ? `${label}, --by ${by}` : label, raw: { ...raw, by } });
    }
  }
  return all;
}

/**
 * Each connection's `name` report over every scope (with `raw` added), as the report reads it and as it works it out
 * with --tz of the connection's own zone (UTC where it has none), which reads nothing stored: whether what is stored
 * answers as the history does.
 */
export async function readAndInOwnZone(
  db: TestDatabase,
  name: ReportName,
  scopes: readonly RawReportQuery[],
  raw: RawReportQuery = {},
): Promise<{ read: unknown[]; inOwnZone: unknown[] }> {
  const reports = createReportStore(db.prisma);
  const zoned = await db.sql.query<{ id: string; timezone: string }>(
    `SELECT id::text, COALESCE(timezone, 'UTC') AS timezone FROM connection ORDER BY id`,
  );
  const read: unknown[] = [];
  const inOwnZone: unknown[] = [];
  for (const { id, timezone } of zoned.rows) {
    for (const scope of scopes) {
      const query = { ...scope, ...raw, connection: id };
      read.push((await runReport(reports, parseReportQuery(name, query, HISTORY_NOW))).rows);
      const inZone = { ...query, tz: timezone };
      inOwnZone.push((await runReport(reports, parseReportQuery(name, inZone, HISTORY_NOW))).rows);
    }
  }
  return { read, inOwnZone };
}

/** Each case's report in every format, and the admin page's reads of the same history. */
export async function allReportAnswers(
  prisma: PrismaClient,
  ids: { connections: string[]; eventId: string },
): Promise<Map<string, string>> {
  const reports = createReportStore(prisma);
  const out = new Map<string, string>();
  for (const c of reportCases(ids)) {
    const result = await runReport(reports, parseReportQuery(c.name, c.raw, HISTORY_NOW));
    for (const format of REPORT_FORMATS)
      out.set(`${c.name}, ${c.label}, ${format}`, formatReport(result, format, 200));
  }
  const heatMap = await reports.bookingsByWeekdayHour({ at: HISTORY_NOW });
  out.set('bookings heat map', JSON.stringify(heatMap));
  const detail = createConnectionDetailStore(prisma);
  for (const id of ids.connections) {
    out.set(`${id} open slots by day`, JSON.stringify(await detail.openSlotsByDay(id, HISTORY_NOW, 28)));
    // Packed runs keep their day's calls per endpoint: exact from a UTC midnight.
    const weekAgo = new Date(Math.floor(HISTORY_NOW.getTime() / DAY_MS) * DAY_MS - 7 * DAY_MS);
    out.set(
      `${id} calls by endpoint for a week`,
      JSON.stringify(await detail.callsByEndpointSince(id, weekAgo)),
    );
  }
  return out;
}

/**
 * sync-health's columns read from histograms once its days are stored (lib/log-histogram.ts), each with the
 * unit it is printed to: within RELATIVE_ERROR of the exact answer, and that unit for the rounding of both.
 */
const APPROXIMATE_COLUMNS: [RegExp, number][] = [
  [/^(median|p95)_seconds$/, 0.001],
  [/^stale_p95_/, 1],
];

function withinError(key: string, expected: unknown, actual: unknown): boolean {
  const unit = APPROXIMATE_COLUMNS.find(([pattern]) => pattern.test(key))?.[1];
  if (unit === undefined || typeof expected !== 'number' || typeof actual !== 'number')
    return JSON.stringify(expected) === JSON.stringify(actual);
  return Math.abs(actual - expected) <= Math.abs(expected) * RELATIVE_ERROR + unit;
}

/** Whether two sync-health answers in JSON agree: every value exactly, the approximate columns within error. */
function sameSyncHealth(expected: string, actual: string): boolean {
  const [a, b] = [JSON.parse(expected), JSON.parse(actual)] as { rows: Record<string, unknown>[] }[];
  if (JSON.stringify({ ...a, rows: null }) !== JSON.stringify({ ...b, rows: null })) return false;
  if (a!.rows.length !== b!.rows.length) return false;
  return a!.rows.every((row, i) => {
    const other = b!.rows[i]!;
    const keys = new Set([...Object.keys(row), ...Object.keys(other)]);
    return [...keys].every((key) => withinError(key, row[key], other[key]));
  });
}

/**
 * The keys whose answers differ between two forms of one history. Everything is compared as printed, except
 * sync-health once its days are stored: its JSON with the percentiles within their error (its table and CSV
 * print the same rows).
 */
export function differingAnswers(expected: Map<string, string>, actual: Map<string, string>): string[] {
  return [...expected]
    .filter(([key, text]) => {
      const other = actual.get(key);
      if (other === text) return false;
      if (other === undefined || !key.startsWith('sync-health,')) return true;
      return key.endsWith(', json') ? !sameSyncHealth(text, other) : false;
    })
    .map(([key]) => key);
}

/** Every bookings answer of allReportAnswers: what the bookings migrations' tests compare before and after. */
export const bookingAnswers = async (
  prisma: PrismaClient,
  ids: { connections: string[]; eventId: string },
): Promise<Map<string, string>> =>
  new Map([...(await allReportAnswers(prisma, ids))].filter(([key]) => key.startsWith('bookings,')));

/**
 * Ranges a connection's stored bookings figures (its weeks, its running totals) start and end in different places
 * for: whole weeks, cut short by --from or --to, before T (a Monday, mid-week), T's own day inside a range, and a
 * range after T.
 */
export const BOOKING_SCOPES: RawReportQuery[] = [
  {},
  { from: '2026-09-19' },
  { from: '2026-08-12', to: '2026-09-09' },
  { from: '2026-08-13', to: '2026-08-15' },
  { at: '2026-09-01T07:13:21.456Z' },
  { at: '2026-09-07T10:00:00Z' },
  { to: '2026-09-13' },
  { at: '2026-09-03T12:00:00Z', from: '2026-09-01' },
  { at: '2026-09-03T12:00:00Z', to: '2026-09-06' },
  { at: '2026-09-03T12:00:00Z', from: '2026-09-10' },
];
