// Plain text tables for the terminal: columns padded to their widest cell, the last column left to wrap, so a
// table reads in a terminal and pastes cleanly into a ticket. Empty results say so instead of printing headers.
// On a terminal the table is fitted to its width by shortening the widest column (cells end in "…"); piped
// output keeps every cell whole, since a script or a file has no width to fit.

const GAP = 2;
/** A column is never shortened below this (or its header's length, if shorter): "abcdef…" still tells apart. */
const MIN_COLUMN = 8;

export interface TableOptions {
  /** Width to fit, in characters; undefined: as wide as the cells need. */
  width?: number;
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

/** Column widths that fit `width`, taking from the widest column first; unchanged when they already fit. */
export function fittedWidths(natural: number[], width: number | undefined): number[] {
  const widths = [...natural];
  if (width === undefined) return widths;
  const total = () => widths.reduce((sum, w) => sum + w, 0) + GAP * Math.max(0, widths.length - 1);
  while (total() > width) {
    let widest = 0;
    widths.forEach((w, i) => {
      if (w > (widths[widest] ?? 0)) widest = i;
    });
    const current = widths[widest] ?? 0;
    if (current <= MIN_COLUMN) break;
    widths[widest] = Math.max(MIN_COLUMN, current - (total() - width));
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
  const widths = fittedWidths(natural, options.width);
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
