// The bookings report's totals and heat map from running totals (booking_total_day), and the booking_totals
// migration on an installation whose report days are stored and whose totals are not (as every installation before
// it). Every connection's totals over every scope are held to the same counted from its bookings with --tz of its
// own zone (which reads nothing stored), and every connection's together to the same counted from the bookings: the
// bookings, booked minutes, mean lead, busiest weekday and hour and the heat map's cells exactly, the median lead
// exactly up to EXACT_MEDIAN_UP_TO bookings, and read from the histograms within RELATIVE_ERROR. Before and after the migration and the run that
// stores the totals, every bookings answer (every grouping, scope and format) is the same.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Prisma } from '../../src/generated/prisma/client.js';
import { bucketKey, bucketValue, RATIO, RELATIVE_ERROR, SMALLEST } from '../../src/lib/log-histogram.js';
import { parseReportQuery, type RawReportQuery } from '../../src/reports/report-query.js';
import type { ReportResult } from '../../src/reports/report-result.js';
import { runReport } from '../../src/reports/run-report.js';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { leadBucketOf, storedCellsAndTotals } from '../../src/store/report-queries/booking-totals.js';
import { countedCellsAndTotals } from '../../src/store/report-queries/bookings-rows.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import { createReportStore } from '../../src/store/reports.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { storeOnly } from '../support/store-only.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import {
  allReportAnswers,
  bookingAnswers as answersOf,
  BOOKING_SCOPES as SCOPES,
  differingAnswers,
} from './report-answers.js';

const MIGRATION = '20261202200000_booking_totals';

let db: TestDatabase;
let ids: { connections: string[]; eventId: string };
const bookingAnswers = () => answersOf(db.prisma, ids);

beforeAll(async () => {
  db = await createTestDatabase('booking_totals_migration');
  ids = await generateMixedHistory(db.prisma);
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

const pass = (now: Date) => pruneHistory(db.prisma, storeOnly(2), { now, pause: async () => undefined });

/** The summary's figures and the heat map's cells (by weekday and hour) of one bookings report. */
const totalsOf = (result: ReportResult) => ({
  summary: Object.fromEntries(result.summary.map((item) => [item.key, item.value])),
  cells: result.rows,
});

/**
 * Each connection's totals over SCOPES as the report reads them and as counted with --tz of its own zone: the same,
 * the median lead exactly too (a connection's bookings are fewer than EXACT_MEDIAN_UP_TO). And every connection's
 * together, as read with the median from the histograms whatever the count, and as counted: the same but for the
 * median, within its error. The bookings counted.
 */
async function expectTotalsAsCounted(): Promise<number> {
  const reports = createReportStore(db.prisma);
  const zoned = await db.sql.query<{ id: string; timezone: string }>(
    `SELECT id::text, COALESCE(timezone, 'UTC') AS timezone FROM connection ORDER BY id`,
  );
  let bookings = 0;
  for (const { id, timezone } of zoned.rows) {
    for (const scope of SCOPES) {
      const query = { ...scope, connection: id, by: 'weekday-hour' as const };
      const read = totalsOf(await runReport(reports, parseReportQuery('bookings', query, HISTORY_NOW)));
      const counted = totalsOf(
        await runReport(reports, parseReportQuery('bookings', { ...query, tz: timezone }, HISTORY_NOW)),
      );
      expect({ scope, ...read }).toEqual({ scope, ...counted });
      bookings += Number(counted.summary.bookings);
    }
  }
  for (const raw of SCOPES) {
    const scope = parseReportQuery('bookings', raw, HISTORY_NOW);
    const fromHistograms = await storedCellsAndTotals(db.prisma, scope, { exactMedianUpTo: 0 });
    const counted = await countedCellsAndTotals(db.prisma, scope);
    expect({ raw, cells: fromHistograms.cells }).toEqual({ raw, cells: counted.cells });
    const { median_lead_hours: median, mean_lead_hours: mean, ...exact } = fromHistograms.totals;
    const {
      median_lead_hours: countedMedian,
      mean_lead_hours: countedMean,
      ...countedExact
    } = counted.totals;
    expect({ raw, ...exact }).toEqual({ raw, ...countedExact });
    // The mean from millisecond sums, the counted one from float seconds: equal to far below its printed hundredth.
    expect(Math.abs(Number(mean) - Number(countedMean))).toBeLessThan(1e-9);
    if (countedMedian === null) expect(median).toBeNull();
    else expect(Math.abs(Number(median) - countedMedian)).toBeLessThanOrEqual(countedMedian * RELATIVE_ERROR);
  }
  return bookings;
}

const count = async (sql: string) => Number((await db.sql.query(sql)).rows[0]?.n);

describe('the bookings report’s totals from running totals', () => {
  it('answers as counted from the bookings before the migration, after it, and once the run stores them', async () => {
    const computed = await bookingAnswers();
    // Nothing stored: every booking counted, as the report worked them out.
    expect(await expectTotalsAsCounted()).toBeGreaterThan(4 * 10);

    // The days stored as the run before this migration stored them, then the migration undone: no totals.
    await pass(HISTORY_NOW);
    expect(await count(`SELECT count(*) AS n FROM booking_total_day`)).toBeGreaterThan(4 * 10);
    expect(differingAnswers(computed, await bookingAnswers())).toEqual([]);
    await expectTotalsAsCounted();
    await db.sql.query(`
      DROP TABLE booking_total_day;
      ALTER TABLE report_days_stored DROP COLUMN booking_totals_through;
      DELETE FROM _prisma_migrations WHERE migration_name = '${MIGRATION}'`);
    const days = await count(`SELECT count(*) AS n FROM booking_day`);

    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: MIGRATIONS_DIR });
    expect(await count(`SELECT count(*) AS n FROM booking_day`)).toBe(days);
    expect(
      await count(`SELECT count(*) AS n FROM report_days_stored WHERE booking_totals_through IS NULL`),
    ).toBe(4);
    expect(differingAnswers(computed, await bookingAnswers())).toEqual([]);
    await expectTotalsAsCounted();

    // An hour later, no day is over since: the run stores the totals alone, through each zone's last day.
    const run = await pass(new Date(HISTORY_NOW.getTime() + 3_600_000));
    expect(run.reportDayFailures).toBe(0);
    expect(
      await count(`SELECT count(*) AS n FROM report_days_stored WHERE booking_totals_through = through`),
    ).toBe(4);
    expect(await count(`SELECT count(*) AS n FROM booking_total_day`)).toBeGreaterThan(4 * 10);
    expect(differingAnswers(computed, await bookingAnswers())).toEqual([]);
    await expectTotalsAsCounted();
  }, 300_000);

  it('adds each day to the running totals, a run a day, with the same answers', async () => {
    // The stored totals left as rows that no longer count, as a connection moved to another zone leaves them until
    // the next run: none is read, and the first run counts them all again.
    await db.sql.query('TRUNCATE report_days_stored');
    const computed = await bookingAnswers();
    await expectTotalsAsCounted();
    // On a server whose dates read day first (the database's own default, for connections made after this): a
    // day's text sorts otherwise than the day.
    await db.sql.query(`ALTER DATABASE "${db.name}" SET DateStyle = 'SQL, DMY'`);
    const prisma = createPrismaClient(db.url);
    try {
      for (let daysBack = 10; daysBack >= 0; daysBack--) {
        const now = new Date(HISTORY_NOW.getTime() - daysBack * 86_400_000);
        const run = await pruneHistory(prisma, storeOnly(2), { now, pause: async () => undefined });
        expect(run.reportDayFailures).toBe(0);
      }
    } finally {
      await prisma.$disconnect();
      await db.sql.query(`ALTER DATABASE "${db.name}" RESET DateStyle`);
    }
    expect(differingAnswers(computed, await bookingAnswers())).toEqual([]);
    await expectTotalsAsCounted();
  }, 300_000);

  it('counts a connection moved to another zone from its bookings until the next run counts its totals again', async () => {
    const [berlin] = ids.connections as [string];
    const computed = await bookingAnswers();
    await db.sql.query(`UPDATE connection SET timezone = 'America/New_York' WHERE id = $1::uuid`, [berlin]);
    try {
      await expectTotalsAsCounted();
      expect((await pass(new Date(HISTORY_NOW.getTime() + 3_600_000))).reportDayFailures).toBe(0);
      await expectTotalsAsCounted();
    } finally {
      await db.sql.query(`UPDATE connection SET timezone = 'Europe/Berlin' WHERE id = $1::uuid`, [berlin]);
    }
    expect((await pass(new Date(HISTORY_NOW.getTime() + 3_600_000))).reportDayFailures).toBe(0);
    expect(differingAnswers(computed, await bookingAnswers())).toEqual([]);
  }, 300_000);

  it('moves no mark back when a run’s clock is behind the last one’s, and counts no day twice after', async () => {
    // The bookings' and sync-health's answers: sync-health's running totals are the others a day counted twice
    // would change.
    const answers = async () =>
      new Map(
        [...(await allReportAnswers(db.prisma, ids))].filter(
          ([key]) => key.startsWith('bookings,') || key.startsWith('sync-health,'),
        ),
      );
    const marks = async () =>
      (
        await db.sql.query(
          `SELECT connection_id, through::text, sync_health_through::text, availability_through::text
           FROM report_days_stored ORDER BY connection_id`,
        )
      ).rows;
    expect((await pass(new Date(HISTORY_NOW.getTime() + 3_600_000))).reportDayFailures).toBe(0);
    const computed = await answers();
    const before = await marks();
    // As the migration leaves the totals' mark, a run five days behind claims every connection.
    await db.sql.query(`UPDATE report_days_stored SET booking_totals_through = NULL`);
    expect((await pass(new Date(HISTORY_NOW.getTime() - 5 * 86_400_000))).reportDayFailures).toBe(0);
    expect(await marks()).toEqual(before);
    expect(differingAnswers(computed, await answers())).toEqual([]);
    expect((await pass(new Date(HISTORY_NOW.getTime() + 3_600_000))).reportDayFailures).toBe(0);
    expect(
      await count(`SELECT count(*) AS n FROM report_days_stored WHERE booking_totals_through = through`),
    ).toBe(4);
    expect(differingAnswers(computed, await answers())).toEqual([]);
  }, 300_000);

  it('puts a lead in the same bucket in Postgres as in JavaScript', async () => {
    const keysInPostgres = async (values: number[]) =>
      (
        await db.prisma.$queryRaw<{ key: number }[]>(Prisma.sql`
          SELECT ${leadBucketOf(Prisma.sql`v`)} AS key
          FROM unnest(${values}::float8[]) WITH ORDINALITY AS u(v, i) ORDER BY i`)
      ).map((row) => row.key);
    // Every lead of the history, values beside each bucket's edges, and leads of up to a year.
    const leads = (
      await db.prisma.$queryRaw<{ lead: number }[]>(
        Prisma.sql`SELECT date_part('epoch', starts_at - detected_at) AS lead FROM booking`,
      )
    ).map((row) => row.lead);
    expect(leads.length).toBeGreaterThan(40);
    const edges = Array.from({ length: 1600 }, (_, k) => SMALLEST * RATIO ** k);
    const values = [
      0,
      SMALLEST / 2,
      ...leads,
      ...edges.flatMap((edge) => [edge * (1 - 1e-12), edge * (1 + 1e-12)]),
      ...Array.from({ length: 2000 }, (_, i) => ((i * 7919) % 31_536_000) + i / 1000),
    ];
    expect(await keysInPostgres(values)).toEqual(values.map((value) => bucketKey(value)));
    // On an edge itself, a last bit of the logarithm may put a value on either side: one bucket apart at most, and
    // read back from either within RELATIVE_ERROR, the edge lying that far from both buckets' values.
    const onEdges = await keysInPostgres(edges);
    edges.forEach((edge, k) => {
      expect(Math.abs(onEdges[k]! - bucketKey(edge))).toBeLessThanOrEqual(1);
      expect(Math.abs(bucketValue(onEdges[k]!) - edge)).toBeLessThanOrEqual(
        edge * RELATIVE_ERROR * (1 + 1e-9),
      );
    });
  });

  it('reads the stored totals: a stored row changed shows in the report, not with --tz', async () => {
    const [berlin] = ids.connections as [string];
    const bookingsOf = async (raw: RawReportQuery) =>
      Number(
        totalsOf(
          await runReport(
            createReportStore(db.prisma),
            parseReportQuery('bookings', { connection: berlin, by: 'weekday-hour', ...raw }, HISTORY_NOW),
          ),
        ).summary.bookings,
      );
    const before = await bookingsOf({});
    const bump = (by: number) =>
      db.sql.query(
        `UPDATE booking_total_day SET bookings = bookings + $2
         WHERE connection_id = $1::uuid AND day = (SELECT max(day) FROM booking_total_day WHERE connection_id = $1::uuid)`,
        [berlin, by],
      );
    await bump(1000);
    try {
      expect(await bookingsOf({})).toBe(before + 1000);
      expect(await bookingsOf({ tz: 'Europe/Berlin' })).toBe(before);
    } finally {
      await bump(-1000);
    }
  }, 120_000);
});
