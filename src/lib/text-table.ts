// Plain text tables for the terminal: columns padded to their widest cell, the last column left to wrap, so a
// table reads in a terminal and pastes cleanly into a ticket. Empty results say so instead of printing headers.
// On a terminal the table is fitted to its width by shortening the widest columns (cells end in "…"), never
// the columns the caller keeps whole: an id is what a user copies into the next command, and a cut one is
// useless, so when the others cannot give enough room the table runs wider than the terminal instead. Piped
// output keeps every cell whole, since a script or a file has no width to fit.

const GAP = 2;
/** A column is never shortened below this (or its header's length, if shorter): "abcdef…" still tells apart. */
const MIN_COLUMN = 8;

export interface TableOptions {
  /** Width to fit, in characters; undefined: as wide as the cells need. */
  width?: number;
  /** Indexes of columns never shortened (ids). */
  keepWhole?: readonly number[];
}

/** The terminal's width when stdout is one, else undefined (pipes and files get full width). */
export function terminalWidth(
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
): number | undefined {
  return stdout.isTTY === true && typeof stdout.columns === 'number' && stdout.columns > 0
    ? stdout.columns
    : undefined;
}

function shorten(cell: string, width: number): string {
  return cell.length <= width ? cell : `${cell.slice(0, Math.max(0, width - 1))}…`;
}

/**
 * Column widths that fit `width`: one character at a time off the widest column that may shrink, so the cut is
 * spread over the wide columns instead of taken from one; unchanged when they already fit. Columns in
 * `keepWhole`, and columns at MIN_COLUMN, are not touched, even if the table then stays too wide.
 */
export function fittedWidths(
  natural: number[],
  width: number | undefined,
  keepWhole: readonly number[] = [],
): number[] {
  const widths = [...natural];
  if (width === undefined) return widths;
  let total = widths.reduce((sum, w) => sum + w, 0) + GAP * Math.max(0, widths.length - 1);
  while (total > width) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (w > MIN_COLUMN && !keepWhole.includes(i) && (widest < 0 || w > (widths[widest] ?? 0))) widest = i;
    });
    if (widest < 0) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
    total--;
  }
  return widths;
}

export function formatTable(
  headers: string[],
  rows: string[][],
  emptyMessage: string,
  options: TableOptions = { width: terminalWidth() },
): string {
  if (rows.length === 0) return `${emptyMessage}\n`;
  const natural = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const widths = fittedWidths(natural, options.width, options.keepWhole);
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const fitted = shorten(cell, widths[i] ?? cell.length);
        return i === cells.length - 1 ? fitted : fitted.padEnd(widths[i] ?? 0);
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}
