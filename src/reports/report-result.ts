// The one shape every report returns, whatever it is later rendered as (terminal table, CSV, JSON, admin
// page). Values are plain: numbers already rounded as the report means them, days as 'YYYY-MM-DD', instants
// as ISO strings, so the three renderings cannot disagree.
import { localTime } from '../lib/local-time.js';
import type { ReportName, ReportQuery } from './report-query.js';

export type ReportValue = string | number | boolean | null;
export type ReportRow = Record<string, ReportValue>;

/**
 * How a column reads in a table: `percent` holds a fraction (0.25 reads "25.0 %"), `hours` and `seconds`
 * one decimal, `duration` seconds read as a person reads them (45 s, 14 min, 1 h 2 min, 12 h), `instant` an
 * ISO instant read as instantWording reads it. CSV and JSON always carry the raw value.
 */
export type ColumnKind =
  'text' | 'integer' | 'percent' | 'hours' | 'seconds' | 'duration' | 'number' | 'instant';

export interface ReportColumn {
  key: string;
  label: string;
  kind: ColumnKind;
  /** Ids are in CSV and JSON; tables show the readable name instead (they must fit a terminal). */
  inTable?: boolean;
}

/** A day's figures summed over every row of the report on it (day-totals.ts). */
export interface DayTotal {
  /** 'YYYY-MM-DD'. */
  day: string;
  /** How many of the report's rows are of the day. */
  rows: number;
  /** Each summed figure, by its column's key. */
  figures: Record<string, number>;
}

export interface ReportSummaryItem {
  key: string;
  label: string;
  value: ReportValue;
  kind: ColumnKind;
}

export interface ReportResult {
  report: ReportName;
  title: string;
  /** One line saying what was counted and how; printed above tables. */
  caption: string;
  query: ReportQuery;
  columns: ReportColumn[];
  rows: ReportRow[];
  /**
   * How many rows the report has, where `rows` holds only the first of them (runReport's `firstRows`, as the admin
   * page asks for its table); absent where `rows` is every row.
   */
  rowCount?: number;
  /**
   * Reports of a row per day (availability, utilization): each day's figures summed over every row, what the admin
   * page's chart draws whether `rows` holds every row or only the first.
   */
  dayTotals?: DayTotal[];
  summary: ReportSummaryItem[];
  /** Said plainly instead of an empty table. */
  emptyMessage: string;
}

export const roundTo = (value: number, decimals: number): number => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};

/** Rounds a nullable number from SQL (node-postgres may hand numerics over as strings). */
export function numberOrNull(value: unknown, decimals: number): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? roundTo(n, decimals) : null;
}

export const dayString = (value: unknown): string =>
  value instanceof Date ? value.toISOString().slice(0, 10) : String(value);

/**
 * An instant as people read it, in the one format the pages use (lib/local-time.ts): "Mon 2 Mar 2026, 09:00
 * UTC", the zone named, to the minute. Reports name their instants in UTC.
 */
export function instantWording(at: Date): string {
  return localTime(at, 'UTC');
}

/** Where the report's days are: one zone for all, or each connection's own. */
export function zoneWording(query: ReportQuery): string {
  return query.timezone ? `days in ${query.timezone}` : "days in each connection's time zone";
}

export function rangeWording(query: ReportQuery): string {
  if (query.from && query.to) return `${query.from} to ${query.to}`;
  if (query.from) return `from ${query.from}`;
  if (query.to) return `up to ${query.to}`;
  return 'all days';
}
