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
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generatePackedSlots } from '../support/packed-slots.js';
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
  // Answered: utilization and bookings look up where the days after the stored ones start before their statement.
  const explained = await explainReport(db.prisma, parseReportQuery(report, raw, NOW), read, {
    answered: true,
  });
  return explained.flatMap((query) => flattenPlan(query.Plan));
}

let db: TestDatabase;
let connectionId: string;
let packedDays: number;
beforeAll(async () => {
  db = await createTestDatabase('one_connection_plan');
  await generatePackedSlots(db, { connections: CONNECTIONS, days: DAYS, now: NOW });
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
