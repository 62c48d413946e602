// Fitting a table to a terminal: ids the caller keeps whole are never cut, the cut is spread over the other
// wide columns, and when they cannot give enough room the table stays wider than the terminal.
import { describe, expect, it } from '@jest/globals';
import { fittedWidths, formatTable } from '../../src/lib/text-table.js';

const ID = '2b7bb471-352a-4469-aebe-c31f5f101473';

describe('fittedWidths', () => {
  it('takes from the widest columns in turn, not all from one', () => {
    expect(fittedWidths([36, 26, 6, 27, 5], 80, [0])).toEqual([36, 12, 6, 13, 5]);
  });

  it('never touches a kept column, nor one at its minimum, even when the table then stays too wide', () => {
    expect(fittedWidths([36, 36, 30], 60, [0, 1])).toEqual([36, 36, 8]);
    expect(fittedWidths([36, 30], 20)).toEqual([9, 9]);
  });
});

describe('formatTable', () => {
  it('keeps an id whole at any width and shortens the rest', () => {
    const rows = [[ID, 'linus.turing@example.test', 'succeeded 2026-11-22T12:40Z']];
    for (const width of [40, 60, 80]) {
      const text = formatTable(['connection', 'account', 'last sync'], rows, 'none', {
        width,
        keepWhole: [0],
      });
      const row = text.split('\n')[2]!;
      expect(row.startsWith(`${ID}  `)).toBe(true);
      expect(row).toContain('…');
    }
  });
});
