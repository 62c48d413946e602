// A one-connection sync-health report costs that connection's history, never the history kept (issue 43): it
// reads the live runs by (connection_id, started_at) and the packed days by (connection_id, day), as many rows as
// the connection has, and compiles nothing: Postgres guesses 100 rows for each jsonb_to_recordset and 1000 for
// each generate_series over a row's values, so the staleness part alone is costed in the millions, and with JIT
// on the report spent a second or more compiling for milliseconds of work (5.4 s at 100 connections). Held on its
// plan, not its time (timing lives in `npm run bench`, BENCH_ONLY=reports,reports-packed): a few connections'
// history generated in bulk, part packed as the compaction packs it, its days stored by the retention run, ANALYZEd,
// and the report's queries explained exactly as the store runs them, in the report session: the listing of its
// stored totals and the days after them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import type { ReportScope } from '../../src/store/report-queries/report-scope.js';
import { syncHealthFigures } from '../../src/store/report-queries/sync-health-figures.js';
import { syncHealthRows } from '../../src/store/report-queries/sync-health-rows.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { blocksTouched, explainReport, flattenPlan, rowsVisited } from '../support/report-plans.js';

const NOW = new Date('2026-09-20T12:00:00Z');
const CONNECTIONS = 50;
const DAYS = 60;
/** The last days stay row by row; the ones before are packed a row per connection and day. */
const LIVE_DAYS = 20;
/** Days of sync_run_daily before the runs generated. */
const ROLLED_UP_DAYS = 300;

/**
 * The report's queries for one connection, explained in the report session as the store runs them: with its days
 * stored (the retention run below stores them), the listing that reads its stored totals and the query of the
 * days after them.
 */
async function explainOneConnection(prisma: TestDatabase['prisma'], connectionId: string) {
  const query = parseReportQuery('sync-health', { connection: connectionId }, NOW);
  const plans = await explainReport(prisma, query, syncHealthRows);
  expect(plans).toHaveLength(2);
  return { plans, nodes: plans.flatMap((plan) => flattenPlan(plan.Plan)) };
}

let db: TestDatabase;
let connectionId: string;
beforeAll(async () => {
  db = await createTestDatabase('sync_health_plan');
  await db.prisma.$executeRaw`
    INSERT INTO connection (id, upstream_user_id, email, timezone, status, updated_at)
    SELECT gen_random_uuid(), 'usr_' || i, 'user' || i || '@plan.test', 'Europe/Berlin', 'active', now()
    FROM generate_series(1, ${CONNECTIONS}::int) i`;
  // A run every two hours, 2 % failed, the rest with the staleness of the changes they stored.
  await db.prisma.$executeRaw`
    INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, error_code, error_message,
                          upstream_calls, change_staleness)
    SELECT gen_random_uuid(), c.id, t.s, t.s + interval '3 seconds',
           (CASE WHEN t.f THEN 'failed' ELSE 'succeeded' END)::sync_outcome,
           CASE WHEN t.f THEN 'upstream_5xx' END, CASE WHEN t.f THEN 'GET /events answered 503' END, 30,
           CASE WHEN t.f THEN '[]'::jsonb ELSE '[{"band": "days 0-1", "boundSeconds": 60, "changes": 2}]'::jsonb END
    FROM connection c,
    LATERAL (SELECT g AS s, random() < 0.02 AS f
             FROM generate_series(${NOW}::timestamptz - ${DAYS}::int * interval '1 day', ${NOW}::timestamptz,
                                  interval '2 hours') g) t`;
  await pruneHistory(
    db.prisma,
    { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: LIVE_DAYS, batchSize: 1000 },
    { now: NOW, pause: async () => undefined },
  );
  // A year's rollup before the runs kept, as retention leaves it once their days are pruned.
  await db.prisma.$executeRaw`
    INSERT INTO sync_run_daily (connection_id, day, outcome, runs, upstream_calls, seconds)
    SELECT c.id, (${NOW}::timestamptz AT TIME ZONE 'UTC')::date - ${DAYS}::int - d, 'succeeded', 12, 360, 36
    FROM connection c, generate_series(1, ${ROLLED_UP_DAYS}::int) d`;
  await db.prisma.$executeRaw`VACUUM ANALYZE`;
  connectionId = (await db.prisma.connection.findFirstOrThrow({ orderBy: { email: 'asc' } })).id;
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('sync-health for one connection', () => {
  it("reads that connection's live runs and packed days by index, and compiles nothing", async () => {
    const liveRuns = await db.prisma.syncRun.count({ where: { connectionId } });
    const packedDays = await db.prisma.syncRunHistory.count({ where: { connectionId } });
    // Both forms hold this connection's history, and the others' outnumber it.
    expect(liveRuns).toBeGreaterThan(200);
    expect(packedDays).toBeGreaterThan(35);
    expect(await db.prisma.syncRun.count()).toBe(CONNECTIONS * liveRuns);

    const { plans, nodes } = await explainOneConnection(db.prisma, connectionId);
    const scans = nodes.filter((node) =>
      ['sync_run', 'sync_run_history', 'sync_health_day'].includes(node['Relation Name'] ?? ''),
    );
    expect(scans.map((node) => node['Relation Name'])).toEqual(
      expect.arrayContaining(['sync_run', 'sync_run_history', 'sync_health_day']),
    );
    for (const scan of scans) expect(scan['Node Type']).not.toBe('Seq Scan');
    // The runs and the staleness each read the connection's rows once: its share, not the table.
    expect(rowsVisited(nodes, 'sync_run')).toBeLessThanOrEqual(2 * liveRuns);
    expect(rowsVisited(nodes, 'sync_run_history')).toBeLessThanOrEqual(2 * packedDays);
    // No second of compiling for milliseconds of work.
    for (const plan of plans) expect(plan.JIT).toBeUndefined();
  });
});

describe('sync-health over every connection, their days stored', () => {
  it.each([
    ['the year up to now', {}],
    ['a month', { from: '2026-08-01', to: '2026-08-31' }],
  ])('%s: the days after the stored ones read none of the rollup before them', async (_, range) => {
    expect(await db.prisma.syncRunDaily.count()).toBe(CONNECTIONS * ROLLED_UP_DAYS);
    const stored = await db.prisma.reportDaysStored.findMany({
      select: { connectionId: true, syncHealthThrough: true },
    });
    expect(stored).toHaveLength(CONNECTIONS);
    for (const { syncHealthThrough } of stored) expect(syncHealthThrough).not.toBeNull();
    // The query of the days after the stored ones, as syncHealthRows sends it for connections with days stored
    // (explained, its listing would find none): the rollup holds only days long before them.
    const ids = stored.map(({ connectionId }) => connectionId);
    const plans = await explainReport(
      db.prisma,
      parseReportQuery('sync-health', range, NOW),
      (tx, scope: ReportScope) =>
        syncHealthFigures(tx, { ...scope, connectionBatch: ids }, { byDay: false, afterStored: true }),
    );
    expect(plans).toHaveLength(1);
    const nodes = flattenPlan(plans[0]!.Plan);
    expect(rowsVisited(nodes, 'sync_run_daily')).toBe(0);
    // Nor its index: by day, a descent to the bound reads a few pages (2 here). By its key, which starts with the
    // connection, the bound on the day was checked against every entry: 102 pages here, 0.25 s at 10,000
    // connections' year.
    expect(blocksTouched(plans[0]!.Plan, 'sync_run_daily')).toBeLessThanOrEqual(5);
  });
});
