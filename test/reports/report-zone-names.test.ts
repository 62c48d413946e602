// The names of the zones Postgres knows, which every report checks its zones against (report-zones.ts), are read
// once for a report store's reports, not once a report: reading them scans Postgres's whole zone database
// (40–90 ms), which each report paid before its first query. They are read again after ZONE_NAMES_KEPT_MS, and a
// failed read is not kept.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { postgresZoneNames, ZONE_NAMES_KEPT_MS } from '../../src/store/report-queries/report-zones.js';
import { createReportStore } from '../../src/store/reports.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('report_zone_names');
  await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

/** Counts the statements this process sends that read Postgres's zone names, until stopped. */
function countZoneNameReads(): { read(): number; stop(): void } {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  let reads = 0;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const [first] = args;
    const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    if (text?.includes('pg_timezone_names')) reads++;
    return original.apply(this, args);
  };
  return { read: () => reads, stop: () => void (prototype.query = original) };
}

let counting: ReturnType<typeof countZoneNameReads> | undefined;
afterEach(() => counting?.stop());

describe('the zone names Postgres knows, in reports', () => {
  it('are read once for several reports of one store', async () => {
    counting = countZoneNameReads();
    const reports = createReportStore(db.prisma);
    for (const name of ['utilization', 'sync-health', 'availability'] as const) {
      const result = await runReport(reports, parseReportQuery(name, {}, HISTORY_NOW));
      expect(result.rows.length).toBeGreaterThan(0);
    }
    expect(counting.read()).toBe(1);
  }, 60_000);

  it('are read again once kept ZONE_NAMES_KEPT_MS, not kept when a read failed, and read again by one that joined it', async () => {
    let nowMs = 0;
    const names = postgresZoneNames(ZONE_NAMES_KEPT_MS, () => nowMs);
    // A Postgres nothing listens for: the read fails, and the next one reads again.
    const unreachable = createPrismaClient('postgresql://postgres@127.0.0.1:1/none');
    try {
      await expect(names(unreachable)).rejects.toThrow();
    } finally {
      await unreachable.$disconnect();
    }
    // A report that joined a read under way which then fails reads them with its own client.
    const unreachableAgain = createPrismaClient('postgresql://postgres@127.0.0.1:1/none');
    try {
      const first = names(unreachableAgain);
      const joined = names(db.prisma);
      await expect(first).rejects.toThrow();
      expect((await joined).has('Europe/Berlin')).toBe(true);
    } finally {
      await unreachableAgain.$disconnect();
    }
    nowMs += ZONE_NAMES_KEPT_MS;
    counting = countZoneNameReads();
    expect((await names(db.prisma)).has('Europe/Berlin')).toBe(true);
    nowMs += ZONE_NAMES_KEPT_MS - 1;
    await names(db.prisma);
    expect(counting.read()).toBe(1);
    nowMs += 1;
    await names(db.prisma);
    expect(counting.read()).toBe(2);
  }, 60_000);
});
