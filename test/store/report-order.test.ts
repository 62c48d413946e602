// A report's rows put in its order (by connection rank, then day) in JavaScript rather than by Postgres: held to a
// plain sort over rows that come in any order, a connection's days in order or not, ranks with no rows between.
import { describe, expect, it } from '@jest/globals';
import { inReportOrder, type RankedRow } from '../../src/store/report-queries/report-order.js';

interface Row extends RankedRow {
  id: number;
}

const plainOrder = (rows: readonly Row[]): Row[] =>
  [...rows].sort((a, b) => a.rank - b.rank || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));

/** A seeded generator, so a failing case can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const dayOf = (index: number) =>
  new Date(Date.UTC(2026, 0, 1) + index * 86_400_000).toISOString().slice(0, 10);

describe('a report’s rows in its order', () => {
  it('orders them as sorting by rank then day does, however they come', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const rows: Row[] = [];
      const connections = 1 + Math.floor(next() * 12);
      for (let rank = 1; rank <= connections; rank++) {
        if (next() < 0.2) continue; // a connection with no days in the range
        const days = Math.floor(next() * 40);
        const first = Math.floor(next() * 400);
        for (let day = 0; day < days; day++)
          rows.push({ rank, day: dayOf(first + day * 3), id: rows.length });
      }
      // Postgres's order: by table page, so a connection's days mostly in order but interleaved with others'.
      const shuffled = next() < 0.5 ? rows.sort(() => next() - 0.5) : rows.reverse();
      expect(inReportOrder(shuffled).map((row) => row.id)).toEqual(plainOrder(shuffled).map((row) => row.id));
    }
  });

  it('keeps rows already in order as they are, and answers none for none', () => {
    const rows: Row[] = [2, 2, 3, 7].map((rank, id) => ({ rank, day: dayOf(id), id }));
    expect(inReportOrder(rows)).toEqual(rows);
    expect(inReportOrder([])).toEqual([]);
  });
});
