// A report read for a page that lists only its first rows (the admin page's table, runReport's `firstRows`): over
// every connection for a year, availability and utilization are millions of rows, of which the page lists a
// thousand, and read whole through Prisma they took tens of seconds and a gigabyte of heap. So the page's rows are
// read with a LIMIT, and what the page shows of every row (its chart's day by day, its summary, how many rows there
// are) is summed per day by Postgres, beside them in the report's snapshot.
import { Prisma } from '../../generated/prisma/client.js';
import { connectionsToSplit, consecutiveRuns, type ExportParts } from './export-parts.js';
import type { BesideRead } from './report-session.js';
import type { ReportScope } from './report-scope.js';
import type { ReportDb } from './report-sql.js';

/** A day's figures summed over every row of the report on it: the day, how many rows, and each figure. */
export type DayTotalRow<Figure extends string> = { day: string; rows: number } & Record<Figure, number>;

/** The report's rows, or its first rows and its day totals (`days`) where only the first are read. */
export interface RowsRead<Row, Figure extends string> {
  rows: Row[];
  days?: DayTotalRow<Figure>[];
}

/**
 * Every row (`firstRows` undefined), or the first `firstRows` of them and each day's totals over all of them, the
 * totals' read begun first (it reads beside the rows: dayTotalsBeside, dayTotalsInParts).
 */
export async function firstRowsAndDays<Row, Figure extends string>(
  firstRows: number | undefined,
  rows: (firstRows?: number) => Promise<Row[]>,
  days: () => Promise<DayTotalRow<Figure>[]>,
): Promise<RowsRead<Row, Figure>> {
  if (firstRows === undefined) return { rows: await rows() };
  const totals = days();
  const [first, daysRead] = await Promise.all([rows(firstRows), totals]);
  return { rows: first, days: daysRead };
}

/** Day totals read beside the report's other reads, on a second connection where one can be had. */
export async function dayTotalsBeside<Figure extends string>(
  beside: BesideRead,
  days: (db: ReportDb) => Promise<DayTotalRow<Figure>[]>,
): Promise<DayTotalRow<Figure>[]> {
  return (await beside(days)).answer;
}

/** How a report's day totals are read in parts: how many (an export's parts), its figures, and one part's read. */
export interface DayTotalParts<Figure extends string> {
  parts: Pick<ExportParts, 'atOnce' | 'fewestConnections'>;
  figures: readonly Figure[];
  days: (db: ReportDb, part: ReportScope) => Promise<DayTotalRow<Figure>[]>;
}

/**
 * The day totals of `scope` read in parts at once, as an export is (export-parts.ts: two runs of consecutive connections
 * where there are enough of them), and added up by day: Postgres sums a statement on one core, and a day's total over
 * every connection is the sum of its totals over each part. Every part but the last is read beside (BesideRead), the
 * last on `db`, the report's own connection, after what it reads already (its first rows, a LIMIT).
 */
export async function dayTotalsInParts<Figure extends string>(
  db: ReportDb,
  scope: ReportScope,
  beside: BesideRead,
  inParts: DayTotalParts<Figure>,
): Promise<DayTotalRow<Figure>[]> {
  const { figures, days } = inParts;
  const split = await connectionsToSplit(db, scope, inParts.parts);
  const parts = split
    ? consecutiveRuns(split.ids, split.parts).map((ids) => ({ ...scope, connectionBatch: ids }))
    : [scope];
  // Each begun beside before the last is read here (an answer awaited inside the map would wait for its part).
  const besideParts = await Promise.all(
    parts.slice(0, -1).map((part) => beside((sibling) => days(sibling, part))),
  );
  const read = await Promise.all([...besideParts.map(({ answer }) => answer), days(db, parts.at(-1)!)]);
  return addedByDay(read.flat(), figures);
}

/** Day totals of several parts added up: a row a day. */
function addedByDay<Figure extends string>(
  totals: readonly DayTotalRow<Figure>[],
  figures: readonly Figure[],
): DayTotalRow<Figure>[] {
  const byDay = new Map<string, DayTotalRow<Figure>>();
  for (const total of totals) {
    const sum = byDay.get(total.day);
    if (sum === undefined) {
      byDay.set(total.day, { ...total });
      continue;
    }
    sum.rows += total.rows;
    for (const figure of figures) {
      (sum as Record<Figure, number>)[figure] += total[figure];
    }
  }
  return [...byDay.values()];
}

/**
 * A figure (a float8 column) summed as the report adds up its rows: each rounded to two decimals first, as
 * report-result.ts's numberOrNull rounds it (Math.round: halves up), a null as 0.
 */
export const summedAsShown = (column: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`COALESCE(SUM(floor(${column} * 100 + 0.5) / 100), 0)::float8`;
