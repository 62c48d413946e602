// docs/scaling.md shows the capacity model as the bench printed it (bench-scaling.md): its assumptions must be the
// model's constants, and its table what the model makes of the unit costs printed beside it. A change to the model
// or its assumptions without the docs regenerated (`BENCH_ONLY=scaling npm run bench`, pasted) fails here.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import * as model from '../bench/capacity-model.js';
import { capacityMarkdown, costsFromMarkdown } from '../bench/capacity-table.js';

const DOC = readFileSync(fileURLToPath(new URL('../../docs/scaling.md', import.meta.url)), 'utf8');

/** Table rows as trimmed cells, the separator row left out. */
const rowsOf = (markdown: string) =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*:?-+/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );

/** The model's assumptions by the name docs/scaling.md gives them (`FEED_POLLS_PER_DAY.google`, …). */
function modelAssumptions(): Map<string, number> {
  const named = new Map<string, number>();
  for (const [name, value] of Object.entries(model)) {
    if (typeof value === 'number') named.set(name, value);
    else if (typeof value === 'object' && value !== null && !Array.isArray(value))
      for (const [key, inner] of Object.entries(value))
        if (typeof inner === 'number') named.set(`${name}.${key}`, inner);
  }
  return named;
}

describe('docs/scaling.md', () => {
  it("states each of the model's assumptions with the model's value", () => {
    const stated = new Map(
      rowsOf(DOC)
        .filter((cells) => /^`[A-Z_.a-z0-9]+`$/.test(cells[0] ?? ''))
        .map((cells) => [cells[0]!.slice(1, -1), Number((cells[1] ?? '').replaceAll(',', ''))]),
    );
    expect(Object.fromEntries(stated)).toEqual(Object.fromEntries(modelAssumptions()));
  });

  it('shows the table the model makes of the unit costs it prints', () => {
    const costs = costsFromMarkdown(DOC);
    expect(Object.keys(costs).length).toBeGreaterThan(20);
    const expected = rowsOf(capacityMarkdown(costs as model.UnitCosts)).filter((cells) => cells.length === 5);
    const shown = rowsOf(DOC).filter((cells) => cells.length === 5);
    expect(shown).toEqual(expected);
  });
});
