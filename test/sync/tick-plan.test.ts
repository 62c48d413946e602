// The scheduler tick's query must cost the connections due, never the connections kept (issue 42): it reads by
// the (status, next_sync_at) index, as many rows as are due. Held on its plan, not its time (timing lives in
// `npm run bench`, BENCH_ONLY=tick, which runs it at a million rows): tens of thousands of rows generated in
// bulk, ANALYZEd as autovacuum would, and the query explained exactly as the store runs it. A lost index, a
// rewritten query the index cannot serve, or an order it cannot give would read the whole table (a Seq Scan, or
// every due row sorted) and fail here.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TICK_BATCH_SIZE } from '../../src/sync/scheduler.js';
import {
  explainDueQuery,
  insertBulkConnections,
  instantWithDue,
  type DueQueryPlan,
} from '../support/bulk-connections.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const BASE = new Date('2026-03-02T09:00:00Z');
/** The default near band's interval: every connection falls due once in it. */
const SPREAD_MS = 4 * 60_000;
const BANDS = ['days 0-1', 'days 2-3', 'days 4-6', 'days 7+'];
const DUE = 100;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('tick_plan');
});
afterAll(async () => {
  await db?.drop();
});

/** The instant with DUE connections due, and how many are (rows sharing that instant count too). */
async function dueInstant(): Promise<{ at: Date; due: number }> {
  const at = await instantWithDue(db.sql, DUE);
  const { rows } = await db.sql.query<{ due: number }>(
    'SELECT count(*)::int AS due FROM connection WHERE next_sync_at <= $1',
    [at],
  );
  return { at, due: rows[0]!.due };
}

function expectIndexRead(plan: DueQueryPlan, due: number) {
  expect(plan.nodeTypes).not.toContain('Seq Scan');
  expect(plan.nodeTypes).not.toContain('Bitmap Heap Scan');
  expect(plan.scan).toMatchObject({
    nodeType: 'Index Scan',
    indexName: 'connection_status_next_sync_at_idx',
  });
  expect(plan.scan.indexCond).toMatch(/next_sync_at <=/);
  expect(plan.rowsRead).toBe(due);
  // Estimated as the due rows, not as a share of the table (thousands here).
  expect(plan.estimatedRows).toBeLessThanOrEqual(4 * due);
}

describe("the tick's query", () => {
  it('reads the due connections by the index on the due time, as many at 20,000 rows kept as at 5,000', async () => {
    const rows = { bandNames: BANDS, base: BASE, spreadMs: SPREAD_MS };
    await insertBulkConnections(db.sql, { ...rows, from: 0, to: 5_000 });
    const small = await dueInstant();
    const atSmall = await explainDueQuery(db.sql, small.at, TICK_BATCH_SIZE);
    expectIndexRead(atSmall, small.due);

    await insertBulkConnections(db.sql, { ...rows, from: 5_000, to: 20_000 });
    const large = await dueInstant();
    const atLarge = await explainDueQuery(db.sql, large.at, TICK_BATCH_SIZE);
    expectIndexRead(atLarge, large.due);
    // Pages touched: a heap page per due row and a few of the index's, whatever the rows kept.
    expect(atLarge.blocks).toBeLessThanOrEqual(large.due + 20);
    expect(atLarge.blocks).toBeLessThanOrEqual(atSmall.blocks * (large.due / small.due) + 20);
  });

  it('reads a later page from where the last one ended, by the index too', async () => {
    const { at, due } = await dueInstant();
    const { rows } = await db.sql.query<{ id: string; nextSyncAt: Date }>(
      `SELECT id, next_sync_at AS "nextSyncAt" FROM connection WHERE next_sync_at <= $1
       ORDER BY next_sync_at, id OFFSET 39 LIMIT 1`,
      [at],
    );
    const plan = await explainDueQuery(db.sql, at, TICK_BATCH_SIZE, rows[0]!);
    expect(plan.scan).toMatchObject({
      nodeType: 'Index Scan',
      indexName: 'connection_status_next_sync_at_idx',
    });
    expect(plan.scan.indexCond).toMatch(/next_sync_at >=/);
    expect(plan.rowsRead).toBeLessThanOrEqual(due - 40 + 5);
    expect(plan.blocks).toBeLessThanOrEqual(due - 40 + 20);
  });
});
