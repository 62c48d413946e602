// A report read for a page that lists only its first rows (the admin page's table, runReport's `firstRows`): over
// every connection for a year, availability and utilization are millions of rows, of which the page lists a
// thousand, and read whole through Prisma they took tens of seconds and a gigabyte of heap. So the page's rows are
// read with a LIMIT, and what the page shows of every row (its chart's day by day, its summary, how many rows there
// are) is summed per day by Postgres, beside them in the report's snapshot.
import { Prisma } from '../../generated/prisma/client.js';
import type { BesideRead } from './report-session.js';
import type { ReportDb } from './report-sql.js';

/** A day's figures summed over every row of the report on it: the day, how many rows, and each figure. */
export type DayTotalRow<Figure extends string> = { day: string; rows: number } & Record<Figure, number>;

/** The report's rows, or its first rows and its day totals (`days`) where only the first are read. */
export interface RowsRead<Row, Figure extends string> {
  rows: Row[];
  days?: DayTotalRow<Figure>[];
}

/**
 * Every row (`firstRows` undefined), or the first `firstRows` of them and, read beside them, each day's totals over
 * all of them.
 */
export async function firstRowsAndDays<Row, Figure extends string>(
  firstRows: number | undefined,
  beside: BesideRead,
  rows: (firstRows?: number) => Promise<Row[]>,
  days: (db: ReportDb) => Promise<DayTotalRow<Figure>[]>,
): Promise<RowsRead<Row, Figure>> {
  if (firstRows === undefined) return { rows: await rows() };
  const { answer } = await beside(days);
  const [first, totals] = await Promise.all([rows(firstRows), answer]);
  return { rows: first, days: totals };
}

/**
 * A figure (a float8 column) summed as the report adds up its rows: each rounded to two decimals first, as
 * report-result.ts's numberOrNull rounds it (Math.round: halves up), a null as 0.
 */
export const summedAsShown = (column: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`COALESCE(SUM(floor(${column} * 100 + 0.5) / 100), 0)::float8`;
