// A one-connection report over packed slots costs that connection's history, never the history kept (issue 43):
// utilization, bookings and availability read slot_history by its key (connection_id, day), as many packed days as
// the connection has, however many connections share the table (sync-health's runs: sync-health-plan.test.ts).
// Held on the plan, not the time (timing lives in `npm run bench`, BENCH_ONLY=reports-year): a few connections'
// slots generated in bulk, packed as the compaction packs them, ANALYZEd, and each report's queries explained
// exactly as the store runs them, in the report session.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  parseReportQuery,
  type RawReportQuery,
  type ReportName,
  type ReportQuery,
} from '../../src/reports/report-query.js';
import { availabilityRows } from '../../src/store/report-queries/availability-rows.js';
import { bookingsRows } from '../../src/store/report-queries/bookings-rows.js';
import type { ReportDb } from '../../src/store/report-queries/report-zones.js';
import { utilizationRows } from '../../src/store/report-queries/utilization-rows.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { explainReport, flattenPlan, rowsVisited, type PlanNode } from '../support/report-plans.js';

const NOW = new Date('2026-09-20T12:00:00Z');
const CONNECTIONS = 30;
const DAYS = 40;

/** Every node of every query `read` runs for `raw`, explained in the report session as the store runs them. */
async function explainedNodes(
  report: ReportName,
  raw: RawReportQuery,
  read: (db: ReportDb, scope: ReportQuery) => Promise<unknown>,
): Promise<PlanNode[]> {
  const explained = await explainReport(db.prisma, parseReportQuery(report, raw, NOW), read);
  return explained.flatMap((query) => flattenPlan(query.Plan));
}

let db: TestDatabase;
let connectionId: string;
let packedDays: number;
beforeAll(async () => {
  db = await createTestDatabase('one_connection_plan');
  await db.prisma.$executeRaw`
    INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
    SELECT gen_random_uuid(), 'usr_' || i, 'user' || i || '@plan.test', 'Europe/Berlin', 'active',
           ${NOW}::timestamptz - ${DAYS + 30}::int * interval '1 day', now()
    FROM generate_series(1, ${CONNECTIONS}::int) i`;
  // A slot every two hours of 3 event types, first seen three days ahead; every seventh taken a day before it
  // started, the rest passed.
  await db.prisma.$executeRaw`
    INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at, gone_at,
                      close_reason)
    SELECT c.id, 'evt_' || e, t.s, t.s + interval '30 minutes', t.s - interval '3 days', t.s - interval '3 days',
           CASE WHEN t.n % 7 = 0 THEN t.s - interval '1 day' ELSE t.s + interval '10 minutes' END,
           (CASE WHEN t.n % 7 = 0 THEN 'taken' ELSE 'passed' END)::slot_close_reason
    FROM connection c, generate_series(1, 3) e,
    LATERAL (SELECT g AS s, row_number() OVER (ORDER BY g) AS n
             FROM generate_series(${NOW}::timestamptz - ${DAYS}::int * interval '1 day',
                                  ${NOW}::timestamptz - interval '1 day', interval '2 hours') g) t`;
  await pruneHistory(
    db.prisma,
    { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 1000 },
    { now: NOW, pause: async () => undefined },
  );
  await db.prisma.$executeRaw`VACUUM ANALYZE`;
  connectionId = (await db.prisma.connection.findFirstOrThrow({ orderBy: { email: 'asc' } })).id;
  packedDays = await db.prisma.slotHistory.count({ where: { connectionId } });
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('a report over packed slots for one connection', () => {
  const cases: [ReportName, RawReportQuery, Parameters<typeof explainedNodes>[2]][] = [
    ['utilization', {}, utilizationRows],
    ['bookings', { by: 'day' }, (tx, scope) => bookingsRows(tx, { ...scope, by: 'day' })],
    ['availability', { at: '2026-09-01T12:00:00Z' }, availabilityRows],
  ];
  it.each(cases)("%s reads that connection's packed days by index", async (report, raw, read) => {
    // The connection's packed history is a thirtieth of the table's.
    expect(packedDays).toBeGreaterThanOrEqual(DAYS - 1);
    expect(await db.prisma.slotHistory.count()).toBe(CONNECTIONS * packedDays);

    const nodes = await explainedNodes(report, { ...raw, connection: connectionId }, read);
    const scans = nodes.filter((node) => node['Relation Name'] === 'slot_history');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan['Node Type']).not.toBe('Seq Scan');
    expect(rowsVisited(nodes, 'slot_history')).toBeLessThanOrEqual(packedDays);
  });
});
