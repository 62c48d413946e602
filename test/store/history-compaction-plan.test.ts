// A retention pass walks the connections in batches, by id (store/history-compaction.ts): each batch finds the
// next few by the primary key's index, whatever the number of connections, instead of reading and sorting every
// connection after the last batch's (a pass over a million connections would read ~5·10^10 rows).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectionsAfter } from '../../src/store/history-compaction.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { flattenPlan, rowsVisited, type ExplainedQuery } from '../support/report-plans.js';

const CONNECTIONS = 3_000;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('history_compaction_plan');
  await db.sql.query(
    `INSERT INTO connection (id, upstream_user_id, email, timezone, status, updated_at)
     SELECT gen_random_uuid(), 'usr_' || n, 'walk' || n || '@compaction.test', 'UTC', 'active', now()
     FROM generate_series(1, $1::int) n`,
    [CONNECTIONS],
  );
  await db.sql.query('ANALYZE connection');
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

async function explained(afterId: string | null, count: number): Promise<ExplainedQuery> {
  const sql = connectionsAfter(afterId, count);
  const { rows } = await db.sql.query<{ 'QUERY PLAN': ExplainedQuery[] }>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.text}`,
    sql.values,
  );
  return rows[0]!['QUERY PLAN'][0]!;
}

describe('a retention pass’s walk over the connections', () => {
  it('finds each batch by the index, in order, reading no more connections than the batch', async () => {
    const { rows: all } = await db.sql.query<{ id: string }>(
      'SELECT id::text AS id FROM connection ORDER BY id',
    );
    for (const afterId of [null, all[0]!.id, all[CONNECTIONS / 2]!.id]) {
      const nodes = flattenPlan((await explained(afterId, 10)).Plan);
      expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort');
      expect(rowsVisited(nodes, 'connection')).toBeLessThanOrEqual(10);
    }
    // And the walk itself: batch after batch, every connection once, in the order of their ids.
    const walked: string[] = [];
    for (let after: string | null = null; ;) {
      const batch: { id: string }[] = await db.prisma.$queryRaw(connectionsAfter(after, 400));
      if (batch.length === 0) break;
      walked.push(...batch.map(({ id }) => id));
      after = batch[batch.length - 1]!.id;
    }
    expect(walked).toEqual(all.map(({ id }) => id));
  });
});
