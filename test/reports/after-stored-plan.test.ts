// A report over every connection whose days are stored reads, of the packed slots, only the days after the stored
// ones (issue 43): the bookings report by day computes the days not stored yet (today's, and any a retention run
// has not reached) from the history, and where those days start is looked up before its statement is built
// (stored-days.ts, withUnstoredFrom). Worked out inside the statement, that start was a subquery whose value
// Postgres could not plan with: it read every connection's packed days, 2.3 GB for a year of 10,000 connections,
// to find the two days after the stored ones. Held on the plan, not the time (timing lives in `npm run bench`,
// BENCH_ONLY=reports-year): a few connections' slots packed as the compaction packs them, their days stored as
// the retention run stores them, and the report's queries explained exactly as the store runs them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Prisma } from '../../src/generated/prisma/client.js';
import { parseReportQuery, type ReportQuery } from '../../src/reports/report-query.js';
import { csvSelectIn } from '../../src/store/report-queries/csv-export.js';
import { postgresZoneNames, type ReportDb } from '../../src/store/report-queries/report-zones.js';
import { bookingsRows } from '../../src/store/report-queries/bookings-rows.js';
import { storeReportDays } from '../../src/store/report-days.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generatePackedSlots } from '../support/packed-slots.js';
import { explainReport, flattenPlan, rowsVisited } from '../support/report-plans.js';

const NOW = new Date('2026-09-20T12:00:00Z');
const CONNECTIONS = 30;
const DAYS = 40;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('after_stored_plan');
  await generatePackedSlots(db, { connections: CONNECTIONS, days: DAYS, now: NOW });
  const connections = await db.prisma.connection.findMany({ select: { id: true } });
  await storeReportDays(
    db.prisma,
    connections.map(({ id }) => id),
    NOW,
  );
  await db.prisma.$executeRaw`VACUUM ANALYZE`;
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

// The report read as rows, and its CSV as the export writes it (the SELECT its COPY runs).
const reads: [string, (db: ReportDb, scope: ReportQuery) => Promise<unknown>][] = [
  ['read as rows', (tx, scope) => bookingsRows(tx, { ...scope, by: 'day' })],
  [
    'as CSV',
    async (tx, scope) =>
      tx.$queryRaw(Prisma.raw(await csvSelectIn(tx, { ...scope, by: 'day' }, postgresZoneNames()))),
  ],
];

describe('the bookings report by day over every connection, their days stored through yesterday', () => {
  it.each(reads)('reads of the packed slots only the days after the stored ones, %s', async (_form, read) => {
    const packedDays = await db.prisma.slotHistory.count();
    expect(packedDays).toBeGreaterThanOrEqual(CONNECTIONS * (DAYS - 1));
    const stored = await db.prisma.reportDaysStored.count({ where: { through: new Date('2026-09-19') } });
    expect(stored).toBe(CONNECTIONS);

    const explained = await explainReport(db.prisma, parseReportQuery('bookings', { by: 'day' }, NOW), read, {
      answered: true,
    });
    const nodes = explained.flatMap((query) => flattenPlan(query.Plan));
    // Slots are first seen three days before they start, so today's sightings are all of slots still live (in
    // `slot`): no packed day holds one, and none is unpacked.
    expect(rowsVisited(nodes, 'slot_history')).toBe(0);
    // And Postgres knew it when it chose the plan: the scan of the days after the stored ones (the one that ran;
    // connections without stored days have their own, here none) was expected to return no more than a day a
    // connection. With the start a subquery, it expected a share of the table by rule of thumb (115 rows here),
    // and at 10,000 connections chose to read all of it.
    const ran = nodes.filter((node) => node['Relation Name'] === 'slot_history' && node['Actual Loops'] > 0);
    expect(ran.length).toBeGreaterThan(0);
    for (const scan of ran) expect(scan['Plan Rows']).toBeLessThanOrEqual(CONNECTIONS);
  });
});
