// sync-health's days stored as running totals (issue 43): once the retention run has stored a connection's days,
// sync-health reads two rows of it for any range and counts only the days after them from their runs. Every
// sync-health answer (each scope and format) stays what it was computed from the runs: counts, calls and the last
// error exactly, the median, p95 and staleness p95 within the histograms' relative error. Days marked stored
// without sync-health's totals (before the migration, or by a scheduler of the version before) are counted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createReportStore } from '../../src/store/reports.js';
import { withReportSession } from '../../src/store/report-queries/report-session.js';
import { postgresZoneNames, type ReportDb } from '../../src/store/report-queries/report-zones.js';
import { syncHealthRows } from '../../src/store/report-queries/sync-health-rows.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { allReportAnswers, differingAnswers } from './report-answers.js';
import { storeOnly } from '../support/store-only.js';

const DAY_MS = 86_400_000;
const STORE_ONLY = storeOnly();
const pass = (db: TestDatabase, now = HISTORY_NOW) =>
  pruneHistory(db.prisma, STORE_ONLY, { now, pause: async () => undefined });

let db: TestDatabase;
let ids: { connections: string[]; eventId: string };

beforeAll(async () => {
  db = await createTestDatabase('sync_health_days');
  ids = await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

const syncHealthAnswers = async () =>
  new Map([...(await allReportAnswers(db.prisma, ids))].filter(([key]) => key.startsWith('sync-health,')));

/** One connection's sync-health row as the report prints it (JSON values). */
async function healthOf(connection: string, raw: Record<string, string> = {}) {
  const query = parseReportQuery('sync-health', { connection, ...raw }, HISTORY_NOW);
  const [row] = (await runReport(createReportStore(db.prisma), query)).rows;
  return row!;
}

const count = async (table: string) =>
  Number((await db.sql.query(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);

describe('sync-health days stored as running totals', () => {
  it('answers every sync-health report as computed from the runs, reading two stored rows a connection', async () => {
    const computed = await syncHealthAnswers();
    // A pass ten days back stores the days over then; the next, the days since: totals go on from the stored.
    await pass(db, new Date(HISTORY_NOW.getTime() - 10 * DAY_MS));
    const earlier = await count('sync_health_day');
    await pass(db);
    expect(earlier).toBeGreaterThan(4 * 40);
    expect(await count('sync_health_day')).toBeGreaterThanOrEqual(earlier + 4 * 9);

    const fromStored = await syncHealthAnswers();
    expect([...fromStored.keys()]).toEqual([...computed.keys()]);
    expect(differingAnswers(computed, fromStored)).toEqual([]);
    // Read from histograms: some percentile is printed differently, within its error (not the same query).
    expect([...computed].filter(([key, text]) => fromStored.get(key) !== text).length).toBeGreaterThan(0);
    // Not vacuous: runs, percentiles and staleness to compare.
    const all = JSON.parse(computed.get('sync-health, all connections, json')!) as {
      rows: Record<string, unknown>[];
    };
    expect(all.rows.every((row) => (row.runs as number) > 1000)).toBe(true);
    expect(all.rows.some((row) => typeof row.stale_p95_0_24h === 'number')).toBe(true);
    expect(all.rows.some((row) => row.last_error !== null)).toBe(true);
  }, 300_000);

  it('reads the stored totals in the connection’s own zone, and computes every run under --tz', async () => {
    const [berlin] = ids.connections as [string];
    const before = await healthOf(berlin);
    const inBerlin = await healthOf(berlin, { tz: 'Europe/Berlin' });
    const month = await healthOf(berlin, { from: '2026-08-20', to: '2026-09-10' });
    // 1000 more successes on the last stored day: the report over every day counts them, one over a range that
    // ends before that day does not, and one under --tz reads the runs.
    await db.sql.query(
      `UPDATE sync_health_day SET succeeded = succeeded + 1000, attempts = attempts + 1000
       WHERE connection_id = $1::uuid AND day = (SELECT max(day) FROM sync_health_day WHERE connection_id = $1::uuid)`,
      [berlin],
    );
    try {
      expect((await healthOf(berlin)).runs).toBe((before.runs as number) + 1000);
      expect((await healthOf(berlin, { from: '2026-08-20', to: '2026-09-10' })).runs).toBe(month.runs);
      expect(await healthOf(berlin, { tz: 'Europe/Berlin' })).toEqual(inBerlin);
    } finally {
      await db.sql.query(
        `UPDATE sync_health_day SET succeeded = succeeded - 1000, attempts = attempts - 1000
         WHERE connection_id = $1::uuid AND day = (SELECT max(day) FROM sync_health_day WHERE connection_id = $1::uuid)`,
        [berlin],
      );
    }
  }, 120_000);

  it('answers from one snapshot: a retention run committing between its reads changes nothing', async () => {
    const [berlin] = ids.connections as [string];
    await pass(db);
    // Berlin's last three stored days taken back, so that the next run stores them again.
    const unstoreLastDays = async () => {
      await db.sql.query(
        `DELETE FROM sync_health_day WHERE connection_id = $1::uuid AND day > '2026-09-16'`,
        [berlin],
      );
      await db.sql.query(
        `UPDATE report_days_stored SET through = '2026-09-16', sync_health_through = '2026-09-16' WHERE connection_id = $1::uuid`,
        [berlin],
      );
    };
    await unstoreLastDays();
    const scope = parseReportQuery('sync-health', { connection: berlin }, HISTORY_NOW);
    const expected = await createReportStore(db.prisma).syncHealth(scope);
    // The report's first read (the stored totals, through the 16th) is followed by a run storing the 17th to the
    // 19th and committing before its second (the days after the stored ones).
    let reads = 0;
    const interleaved = await withReportSession(db.prisma, postgresZoneNames(), scope, (tx, session) =>
      syncHealthRows(
        {
          $queryRaw: (async (...args: Parameters<ReportDb['$queryRaw']>) => {
            const rows = await tx.$queryRaw(...args);
            if (++reads === 1) expect((await pass(db)).reportDaysStored).toBeGreaterThan(0);
            return rows;
          }) as ReportDb['$queryRaw'],
        },
        session,
      ),
    );
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(interleaved).toEqual(expected);
    expect(expected[0]!.runs).toBeGreaterThan(1000);
  }, 120_000);

  it('counts the days stored before the migration, or by a scheduler of the version before, without sync-health’s', async () => {
    const computed = await syncHealthAnswers();
    const utilizationDays = await count('utilization_day');
    // As the migration leaves an installation that stored report days before it: no sync-health totals, and
    // sync_health_through (the column it adds) null.
    await db.sql.query('DELETE FROM sync_health_day');
    await db.sql.query('UPDATE report_days_stored SET sync_health_through = NULL');
    await pass(db);
    expect(await count('report_days_stored')).toBe(ids.connections.length);
    expect(await count('sync_health_day')).toBeGreaterThan(4 * 50);
    expect(await count('utilization_day')).toBe(utilizationDays);
    expect(differingAnswers(computed, await syncHealthAnswers())).toEqual([]);

    // A scheduler of the version before, still running after the migration, marks days stored (through) without
    // writing their totals: the next run of this version counts them.
    const [berlin] = ids.connections as [string];
    await db.sql.query(`DELETE FROM sync_health_day WHERE connection_id = $1::uuid AND day > '2026-09-12'`, [
      berlin,
    ]);
    await db.sql.query(
      `UPDATE report_days_stored SET sync_health_through = '2026-09-12' WHERE connection_id = $1::uuid`,
      [berlin],
    );
    const runsBefore = (await healthOf(berlin)).runs;
    expect((await pass(db)).reportDaysStored).toBeGreaterThan(0);
    expect(
      (
        await db.sql.query(
          `SELECT sync_health_through::text AS d FROM report_days_stored WHERE connection_id = $1`,
          [berlin],
        )
      ).rows[0]?.d,
    ).toBe('2026-09-19');
    expect((await healthOf(berlin)).runs).toBe(runsBefore);
    expect(differingAnswers(computed, await syncHealthAnswers())).toEqual([]);
  }, 300_000);

  it('keeps the durations and staleness of runs retention prunes, and answers the same after', async () => {
    const before = await syncHealthAnswers();
    const readsStored = (key: string) => !/zone/.test(key);
    const result = await pruneHistory(
      db.prisma,
      { ...STORE_ONLY, syncRunDays: 30 },
      { now: HISTORY_NOW, pause: async () => undefined },
    );
    expect(result.syncRuns).toBeGreaterThan(0);
    const after = await syncHealthAnswers();
    expect([...before].filter(([key, text]) => readsStored(key) && after.get(key) !== text)).toEqual([]);
  }, 300_000);
});
