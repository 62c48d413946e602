// A report's figures summed per day over every one of its rows: what the admin page's line chart draws, and, where
// the page reads only the rows it lists (runReport's `firstRows`), what its summary and row count are made of.
// Over every connection for a year these are millions of rows; Postgres sums them then (the store's day totals),
// and this sums the rows a report read whole, to the same figures (test/web/report-table-cut.test.ts).
import { roundTo, type DayTotal, type ReportRow } from './report-result.js';

/**
 * Sums are kept to the hundredth the rows are rounded to: added up in another order (Postgres's, or per day and then
 * over days) floating point sums of hundredths differ in their last bits, and the page and the CLI must agree.
 */
const asShown = (sum: number): number => roundTo(sum, 2);

/** `rows`' figures of `keys` summed per day (a value missing or null counts 0), in no particular order. */
export function dayTotalsOf(rows: readonly ReportRow[], keys: readonly string[]): DayTotal[] {
  const byDay = new Map<string, DayTotal>();
  for (const row of rows) {
    const day = String(row.day);
    let total = byDay.get(day);
    if (total === undefined) {
      total = { day, rows: 0, figures: Object.fromEntries(keys.map((key) => [key, 0])) };
      byDay.set(day, total);
    }
    total.rows += 1;
    for (const key of keys) total.figures[key]! += Number(row[key] ?? 0);
  }
  for (const total of byDay.values()) {
    for (const key of keys) total.figures[key] = asShown(total.figures[key]!);
  }
  return [...byDay.values()];
}

/** Day totals as the store sums them (store/report-queries/first-rows.ts): a row each, the figures beside the day. */
export function dayTotalsRead(
  read: readonly ({ day: string; rows: number } & Record<string, number | string>)[],
  keys: readonly string[],
): DayTotal[] {
  return read.map((day) => ({
    day: day.day,
    rows: day.rows,
    figures: Object.fromEntries(keys.map((key) => [key, asShown(Number(day[key]))])),
  }));
}

/** A figure summed over every day. */
export const summedOver = (days: readonly DayTotal[], key: string): number =>
  asShown(days.reduce((sum, day) => sum + (day.figures[key] ?? 0), 0));

/** How many rows the days hold. */
export const rowsIn = (days: readonly DayTotal[]): number => days.reduce((sum, day) => sum + day.rows, 0);
