// Reading packed history costs its rows' pages, not a lookup per run (issue 43): a report over packed days unnests
// each day's arrays, and two things in that unnesting were paid per element, much of an all-connection report's
// time at scale (BENCH_ONLY=reports-year): the enum's values (a run's outcome)
// searched in pg_enum for every element, two buffer hits each; and the staleness of a run read by subscripting the
// day's stored start times, which decompressed them from TOAST again for every element. Held on the plan's
// buffers, not its time (timing lives in `npm run bench`): a few connections' runs every ten minutes, packed as
// the compaction packs them, sync-health explained as the store runs it over all of them. The buffers it touches
// stay well under one per packed run and staleness; they were several each (11,414 for 14,232).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery, type ReportName, type ReportQuery } from '../../src/reports/report-query.js';
import type { ReportDb } from '../../src/store/report-queries/report-zones.js';
import { syncHealthRows } from '../../src/store/report-queries/sync-health-rows.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { explainReport } from '../support/report-plans.js';

const NOW = new Date('2026-09-20T12:00:00Z');
const CONNECTIONS = 4;
const DAYS = 10;

/** Buffers (hit or read) of every query `read` runs, explained in the report session as the store runs them. */
async function buffersOf(
  prisma: TestDatabase['prisma'],
  report: ReportName,
  read: (db: ReportDb, scope: ReportQuery) => Promise<unknown>,
): Promise<number> {
  const explained = await explainReport(prisma, parseReportQuery(report, {}, NOW), read);
  return explained.reduce((sum, { Plan }) => sum + Plan['Shared Hit Blocks'] + Plan['Shared Read Blocks'], 0);
}

let db: TestDatabase;
let packedRuns: number;
let packedStaleness: number;
beforeAll(async () => {
  db = await createTestDatabase('packed_history_cost');
  await db.prisma.$executeRaw`
    INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
    SELECT gen_random_uuid(), 'usr_' || i, 'user' || i || '@cost.test', 'Europe/Berlin', 'active',
           ${NOW}::timestamptz - interval '30 days', now()
    FROM generate_series(1, ${CONNECTIONS}::int) i`;
  // A run every ten minutes, every fifth failed, the others with the staleness of the changes they stored.
  await db.prisma.$executeRaw`
    INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, error_code, error_message,
                          upstream_calls, change_staleness)
    SELECT gen_random_uuid(), c.id, t.s, t.s + interval '3 seconds',
           (CASE WHEN t.n % 5 = 0 THEN 'failed' ELSE 'succeeded' END)::sync_outcome,
           CASE WHEN t.n % 5 = 0 THEN 'upstream_5xx' END, CASE WHEN t.n % 5 = 0 THEN 'GET /events answered 503' END,
           12,
           CASE WHEN t.n % 5 = 0 THEN '[]'::jsonb
                ELSE '[{"band": "2d", "boundSeconds": 240, "changes": 2}, {"band": "*", "boundSeconds": 7200, "changes": 1}]'::jsonb END
    FROM connection c,
    LATERAL (SELECT g AS s, row_number() OVER (ORDER BY g) AS n
             FROM generate_series(${NOW}::timestamptz - ${DAYS}::int * interval '1 day', ${NOW}::timestamptz,
                                  interval '10 minutes') g) t`;
  await pruneHistory(
    db.prisma,
    { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 1000 },
    { now: NOW, pause: async () => undefined },
  );
  await db.prisma.$executeRaw`VACUUM ANALYZE`;
  const [counted] = await db.prisma.$queryRaw<{ runs: number; staleness: number }[]>`
    SELECT SUM(cardinality(outcome))::int AS runs, SUM(cardinality(stale_run))::int AS staleness
    FROM sync_run_history`;
  ({ runs: packedRuns, staleness: packedStaleness } = counted!);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('reports over packed history', () => {
  it('sync-health touches well under a buffer per packed run and staleness, not several each', async () => {
    expect(packedRuns).toBeGreaterThan(CONNECTIONS * (DAYS - 2) * 100);
    expect(packedStaleness).toBeGreaterThan(packedRuns);
    const buffers = await buffersOf(db.prisma, 'sync-health', syncHealthRows);
    expect(buffers).toBeLessThan((packedRuns + packedStaleness) / 4);
  });
});
