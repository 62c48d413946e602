// A report's rows in the order it lists them, put in that order here rather than by Postgres: a year of 10,000
// connections' days is 1.8 million rows (some 230 MB to sort, past the report's working memory, so on disk), while
// each row already carries its connection's place (connectionsInOrder's rank) and a connection's days come mostly
// in order. So the rows are counted into their ranks' places (a counting sort), and only a connection whose days
// came out of order is sorted.

/** A row of a report listed by connection, then day. */
export interface RankedRow {
  /** The connection's place in the report (connectionsInOrder: by name, then id), from 1. */
  rank: number;
  /** 2026-03-01: ISO days compare as text in date order. */
  day: string;
}

const byDay = (a: RankedRow, b: RankedRow): number => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0);

/** `rows` by rank, then day (a connection's days distinct, as each row is a connection's day). */
export function inReportOrder<Row extends RankedRow>(rows: readonly Row[]): Row[] {
  let highest = 0;
  for (const row of rows) highest = Math.max(highest, row.rank);
  // starts[rank]: where that rank's rows begin in the answer; starts[rank + 1]: where they end.
  const starts = new Int32Array(highest + 2);
  for (const row of rows) starts[row.rank + 1]! += 1;
  for (let rank = 1; rank < starts.length; rank++) starts[rank]! += starts[rank - 1]!;
  const next = starts.slice();
  const ordered = new Array<Row>(rows.length);
  for (const row of rows) ordered[next[row.rank]!++] = row;
  for (let rank = 1; rank <= highest; rank++) sortDaysIfNeeded(ordered, starts[rank]!, starts[rank + 1]!);
  return ordered;
}

/** Sorts `rows[from, to)` by day, unless they are in day order already. */
function sortDaysIfNeeded(rows: RankedRow[], from: number, to: number): void {
  let inOrder = true;
  for (let i = from + 1; i < to && inOrder; i++) inOrder = rows[i - 1]!.day < rows[i]!.day;
  if (inOrder) return;
  const sorted = rows.slice(from, to).sort(byDay);
  for (let i = from; i < to; i++) rows[i] = sorted[i - from]!;
}
