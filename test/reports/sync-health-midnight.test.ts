// sync-health reads a connection's stored days as running totals and counts the runs after them (issue 43), and
// finds those runs without working out each one's local day: only the runs near the midnight after the stored days
// are placed by it (report-queries/sync-health-figures.ts). Where that midnight comes twice, Postgres reads the later
// one; the runs between the two are on the new day all the same, and are counted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createReportStore } from '../../src/store/reports.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { storeOnly } from '../support/store-only.js';

/** Azores set their clocks back from 01:00 to 00:00 on 25 October 2026 (01:00 UTC): midnight comes twice. */
const ZONE = 'Atlantic/Azores';
const NOW = new Date('2026-10-25T12:00:00Z');

let db: TestDatabase;
let connectionId: string;
beforeAll(async () => {
  db = await createTestDatabase('sync_health_midnight');
  const [inserted] = await db.prisma.$queryRaw<{ id: string }[]>`
    INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
    VALUES (gen_random_uuid(), 'usr_azores', 'azores@midnight.test', ${ZONE}, 'active', '2026-10-20T00:00:00Z', now())
    RETURNING id::text AS id`;
  connectionId = inserted!.id;
  // A run every ten minutes for three days up to NOW, each of three seconds.
  await db.prisma.$executeRaw`
    INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, upstream_calls, change_staleness)
    SELECT gen_random_uuid(), ${connectionId}::uuid, g, g + interval '3 seconds', 'succeeded', 30, '[]'::jsonb
    FROM generate_series(${NOW}::timestamptz - interval '3 days', ${NOW}::timestamptz, interval '10 minutes') g`;
  // The retention run stores the days over at NOW: through the 24th, the day before the clock change.
  await pruneHistory(db.prisma, storeOnly(), { now: NOW, pause: async () => undefined });
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

const runsCounted = async (raw: Record<string, string>) => {
  const query = parseReportQuery('sync-health', { connection: connectionId, ...raw }, NOW);
  const [row] = (await runReport(createReportStore(db.prisma), query)).rows;
  return row!.runs;
};

describe('sync-health after the stored days, where midnight comes twice', () => {
  it('counts the runs between the two midnights on the new day', async () => {
    const stored = await db.prisma.reportDaysStored.findUniqueOrThrow({ where: { connectionId } });
    expect(stored.syncHealthThrough?.toISOString().slice(0, 10)).toBe('2026-10-24');
    // Six runs start between 00:00 and 01:00 UTC on the 25th, the first of the two local midnights and the second.
    const between = await db.prisma.syncRun.count({
      where: { startedAt: { gte: new Date('2026-10-25T00:00:00Z'), lt: new Date('2026-10-25T01:00:00Z') } },
    });
    expect(between).toBe(6);
    // The stored totals and the runs after them, against every run counted in the same zone (--tz computes the
    // report from the runs alone): over the whole history and over the new day.
    expect(await runsCounted({})).toBe(await runsCounted({ tz: ZONE }));
    expect(await runsCounted({ from: '2026-10-25' })).toBe(
      await runsCounted({ from: '2026-10-25', tz: ZONE }),
    );
    expect(await runsCounted({})).toBe(await db.prisma.syncRun.count());
  });
});
