// Plain text tables for the terminal: columns padded to their widest cell, the last column left to wrap, so a
// table reads in a terminal and pastes cleanly into a ticket. Empty results say so instead of printing headers.

export function formatTable(headers: string[], rows: string[][], emptyMessage: string): string {
  if (rows.length === 0) return `${emptyMessage}\n`;
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}
